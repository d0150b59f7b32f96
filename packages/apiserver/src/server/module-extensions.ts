import { BadRequestError, isConvergeError, type KubeObject, type StatusCause } from '@converge/runtime';
import {
  applyDefaults,
  type CustomResourceDefinition,
  crdInfo,
  crdRuleCauses,
  openApiV3ForGroupVersion,
  pruneUnknownFields,
  type StructuralSchema,
  validateCrd,
  validateCrdUpdate,
  validateCustomResource,
  validateCustomResourceRules,
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

/** Schema validation's `causes` plus those of the `x-kubernetes-validations` rules. */
function withRules(
  schema: StructuralSchema,
  object: JsonObject,
  old: KubeObject | undefined,
  causes: StatusCause[],
  warn: ((text: string) => void) | undefined,
): StatusCause[] {
  const rules = validateCustomResourceRules(schema, object, old, causes);
  for (const text of rules.warnings) warn?.(text);
  return [...causes, ...rules.causes];
}

/**
 * The CRD module (`../crd`) as hooks: full CRD validation (with the compile and cost checks of its
 * CEL rules), and for custom resources pruning, defaulting, schema validation and the CEL rules
 * (main resource and `/status`), OpenAPI v3 documents and printer columns. A CRD the module cannot describe is served schemaless.
 */
export function crdModuleHooks(): CustomResourceHooks {
  return {
    validateCrd(crd, old): readonly StatusCause[] {
      return asRequestError(() => {
        const causes = old === undefined ? validateCrd(crd) : validateCrdUpdate(crd, asCrd(old));
        // the rules compile against a valid schema only, as kube checks them after the schema
        return causes.length > 0 ? causes : crdRuleCauses(crd);
      });
    },
    validateCustomResource(crd, version, object, old, warn) {
      const schema = schemaOf(crd, version);
      if (schema === undefined) return [];
      return asRequestError(() =>
        withRules(schema, object, old, validateCustomResource(schema, object), warn),
      );
    },
    validateCustomResourceStatus(crd, version, object, old, warn) {
      const schema = schemaOf(crd, version);
      if (schema === undefined) return [];
      return asRequestError(() =>
        withRules(schema, object, old, validateCustomResourceStatus(schema, object), warn),
      );
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
