import { apiVersionOf, BadRequestError, type ResourceType } from '@converge/runtime';
import { cloneJson, type JsonObject } from './json.ts';
import { checkShape } from './validate.ts';

/** A mutable working copy of an object inside the write pipeline. */
export type Draft = JsonObject & { metadata: JsonObject };

/**
 * Turns a caller's object into a draft the store owns: a validated deep copy (JSON only) with
 * well-typed metadata and the type's `apiVersion` and `kind` (filled in when absent; a different
 * value is a {@link BadRequestError}, as is a namespace on an object of a cluster-scoped type).
 */
export function toDraft(type: ResourceType, input: unknown): Draft {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new BadRequestError('the object must be a JSON object');
  }
  const copy = cloneJson(input) as JsonObject;
  checkShape(copy);
  const apiVersion = apiVersionOf(type);
  if (copy.apiVersion !== undefined && copy.apiVersion !== apiVersion) {
    throw new BadRequestError(
      `the API version in the data (${String(copy.apiVersion)}) does not match the expected API version (${apiVersion})`,
    );
  }
  if (copy.kind !== undefined && copy.kind !== type.kind) {
    throw new BadRequestError(
      `the kind in the data (${String(copy.kind)}) does not match the expected kind (${type.kind})`,
    );
  }
  const namespace = (copy.metadata as JsonObject).namespace;
  if (!type.namespaced && namespace !== undefined && namespace !== '') {
    throw new BadRequestError(
      `${type.kind} is cluster-scoped: the object cannot have a namespace (got ${JSON.stringify(namespace)})`,
    );
  }
  const { apiVersion: _a, kind: _k, ...rest } = copy;
  return { apiVersion, kind: type.kind, ...rest } as unknown as Draft;
}

/** The metadata of a draft, typed loosely for reading well-known fields. */
export function metaOf(draft: Draft): {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  finalizers?: string[];
  deletionTimestamp?: string;
} {
  return draft.metadata as never;
}
