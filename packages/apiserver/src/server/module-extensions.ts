import { BadRequestError, isConvergeError, type KubeObject, type StatusCause } from '@converge/runtime';
import {
  applyDefaults,
  type CustomResourceDefinition,
  crdInfo,
  openApiV3ForGroupVersion,
  pruneUnknownFields,
  type StructuralSchema,
  validateCrd,
  validateCrdUpdate,
  validateCustomResource,
  validateCustomResourceStatus,
} from '../crd/index.ts';
import { toTable } from '../table/index.ts';
import type { JsonObject } from './api-resource.ts';
import type { CustomResourceHooks, TableHooks } from './extensions.ts';

function asCrd(crd: unknown): CustomResourceDefinition {
  return crd as CustomResourceDefinition;
}

/** The version of a stored CRD, or undefined when the CRD module cannot describe it. */
function versionOf(
  crd: KubeObject,
  version: string,
): ReturnType<typeof crdInfo>['versions'][number] | undefined {
  try {
    return crdInfo(asCrd(crd)).versions.find((v) => v.name === version);
  } catch {
    return undefined;
  }
}

function schemaOf(crd: KubeObject, version: string): StructuralSchema | undefined {
  return versionOf(crd, version)?.schema;
}

/** Makes `target` hold exactly the members of `source` (keys such as `__proto__` stay data). */
function replaceContents(target: JsonObject, source: unknown): void {
  for (const key of Object.keys(target)) delete target[key];
  for (const [key, value] of Object.entries(source as JsonObject)) {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  }
}

/** The CRD module reports undecodable input with its own errors carrying `status: 400`: a BadRequest. */
function asRequestError<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (isConvergeError(error) && (error as { status?: unknown }).status === 400 && !('reason' in error)) {
      throw new BadRequestError(error.message, { cause: error });
    }
    throw error;
  }
}

/**
 * The CRD module (`../crd`) as hooks: full CRD validation, and for custom resources pruning,
 * defaulting and schema validation (main resource and `/status`), OpenAPI v3 documents and
 * printer columns. A CRD the module cannot describe is served schemaless.
 */
export function crdModuleHooks(): CustomResourceHooks {
  return {
    validateCrd(crd, old): readonly StatusCause[] {
      return asRequestError(() =>
        old === undefined ? validateCrd(crd) : validateCrdUpdate(crd, asCrd(old)),
      );
    },
    validateCustomResource(crd, version, object) {
      const schema = schemaOf(crd, version);
      return schema === undefined ? [] : asRequestError(() => validateCustomResource(schema, object));
    },
    validateCustomResourceStatus(crd, version, object) {
      const schema = schemaOf(crd, version);
      return schema === undefined ? [] : asRequestError(() => validateCustomResourceStatus(schema, object));
    },
    pruneUnknownFields(crd, version, object) {
      const schema = schemaOf(crd, version);
      if (schema === undefined) return [];
      const result = asRequestError(() => pruneUnknownFields(schema, object));
      replaceContents(object, result.object);
      return result.pruned;
    },
    applyDefaults(crd, version, object) {
      const schema = schemaOf(crd, version);
      if (schema !== undefined)
        replaceContents(
          object,
          asRequestError(() => applyDefaults(schema, object)),
        );
    },
    openApiV3ForGroupVersion(crds, group, version) {
      return openApiV3ForGroupVersion(crds.map(asCrd), group, version) as JsonObject;
    },
    printerColumns(crd, version) {
      return versionOf(crd, version)?.printerColumns;
    },
  };
}

/** The table module (`../table`) as the Table hook: kubectl's columns, CRD printer columns. */
export function tableModuleHooks(printerColumns: CustomResourceHooks['printerColumns']): TableHooks {
  return {
    toTable(resource, objects, options) {
      const columns =
        resource.crd === undefined ? undefined : (printerColumns?.(resource.crd, resource.version) ?? []);
      return toTable({
        objects,
        group: resource.group,
        version: resource.version,
        kind: resource.kind,
        ...(columns === undefined ? {} : { printerColumns: columns as never }),
        includeObject: options.includeObject,
        resourceVersion: options.resourceVersion,
        ...(options.continue === undefined ? {} : { continue: options.continue }),
        ...(options.remainingItemCount === undefined
          ? {}
          : { remainingItemCount: options.remainingItemCount }),
        tableVersion: options.tableVersion,
        ...(options.noHeaders === true ? { noHeaders: true } : {}),
        nowMs: options.nowMs,
      }) as unknown as JsonObject;
    },
  };
}
