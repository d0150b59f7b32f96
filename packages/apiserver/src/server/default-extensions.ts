import { UnsupportedError } from '@converge/runtime';
import {
  applyStrategicMergePatch,
  type PatchSchema,
  patchSchemaFor,
  patchSchemaFromOpenAPI,
  serverSideApply,
  updateManagedFields,
} from '../patch/index.ts';
import { decodeProtobufObject } from '../protobuf/index.ts';
import { type ApiResource, groupVersion, type JsonObject } from './api-resource.ts';
import { builtinPatchSchema } from './builtin-patch-schema.ts';
import type { ApiServerExtensions, PatchContext } from './extensions.ts';
import { asObject } from './json-util.ts';
import { crdModuleHooks, tableModuleHooks } from './module-extensions.ts';

const UNSUPPORTED_SMP =
  'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml';

function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The patch schema of a resource: a built-in's, or one made from its CRD version's schema. */
function schemaOf(resource: ApiResource): PatchSchema | undefined {
  const crd = resource.crd;
  if (crd === undefined)
    return (
      patchSchemaFor(resource.group, resource.version, resource.kind) ??
      builtinPatchSchema(resource.group, resource.version, resource.kind)
    );
  const versions = asObject((crd as unknown as JsonObject).spec)?.versions;
  const version = (Array.isArray(versions) ? versions : [])
    .map(asObject)
    .find((v) => v?.name === resource.version);
  const schema = asObject(version?.schema)?.openAPIV3Schema;
  return schema === undefined ? undefined : patchSchemaFromOpenAPI(schema);
}

/** Fields a write may not own: `.status` on the main resource of a kind with a status subresource. */
function resetFields(context: PatchContext): readonly (readonly string[])[] | undefined {
  return context.subresource === undefined && context.resource.statusSubresource ? [['status']] : undefined;
}

/**
 * The hooks this package's other modules provide: CRD validation, pruning, defaulting and OpenAPI
 * from `../crd`, Tables from `../table`, strategic merge patch, server-side apply and managed
 * fields from `../patch`, protobuf request bodies from `../protobuf`. `createApiServer` installs
 * them unless `options.extensions` overrides a hook.
 */
export function defaultExtensions(): ApiServerExtensions {
  const crd = crdModuleHooks();
  return {
    ...crd,
    ...tableModuleHooks(crd.printerColumns),
    applyStrategicMergePatch(current, patch, context) {
      const schema = context.resource.crd === undefined ? schemaOf(context.resource) : undefined;
      if (schema === undefined || schema.type !== 'struct') throw new UnsupportedError(UNSUPPORTED_SMP);
      return applyStrategicMergePatch(current, patch, schema) as JsonObject;
    },
    serverSideApply(current, applied, context) {
      const result = serverSideApply({
        live: current,
        applied,
        manager: context.fieldManager,
        force: context.force,
        apiVersion: groupVersion(context.resource),
        schema: schemaOf(context.resource),
        now: rfc3339(context.now()),
        subresource: context.subresource,
        resetFields: resetFields(context),
      });
      return result.object as JsonObject;
    },
    recordManagedFields(live, updated, context) {
      return updateManagedFields({
        live,
        updated,
        manager: context.fieldManager,
        apiVersion: groupVersion(context.resource),
        now: rfc3339(context.now()),
        subresource: context.subresource,
        schema: schemaOf(context.resource),
        resetFields: resetFields(context),
      });
    },
    decodeProtobuf(bytes, expected) {
      return decodeProtobufObject(bytes, expected).object;
    },
  };
}
