import { BadRequestError, type KubeObject } from '@converge/runtime';
import { BuiltinDecodeError, builtinDefinitionName, checkBuiltinObject } from '../builtin/index.ts';
import type { ApiResource, JsonObject } from './api-resource.ts';
import { takeDuplicateFields } from './duplicate-fields.ts';
import type { ApiServerExtensions } from './extensions.ts';
import { asObject } from './json-util.ts';
import type { FieldValidation } from './query.ts';

/** The fields of `metav1.ObjectMeta`. */
const OBJECT_META_FIELDS: ReadonlySet<string> = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);

/** Removes unknown `metadata` fields and, for built-ins, unknown top-level fields; returns their paths. */
function pruneKnownShape(resource: ApiResource, object: JsonObject): string[] {
  const unknown: string[] = [];
  const meta = asObject(object.metadata);
  if (meta !== undefined) {
    for (const key of Object.keys(meta)) {
      if (!OBJECT_META_FIELDS.has(key)) {
        unknown.push(`metadata.${key}`);
        delete meta[key];
      }
    }
  }
  const known = resource.topLevelFields;
  if (known !== undefined) {
    for (const key of Object.keys(object)) {
      if (!known.has(key)) {
        unknown.push(key);
        delete object[key];
      }
    }
  }
  return unknown;
}

/** kube-apiserver's wording for a body its decoder rejects: `Deployment in version "v1" cannot be handled as a Deployment: …`. */
function cannotBeHandled(resource: ApiResource, cause: string): BadRequestError {
  return new BadRequestError(
    `${resource.kind} in version ${JSON.stringify(resource.version)} cannot be handled as a ${resource.kind}: ${cause}`,
  );
}

/**
 * Checks a built-in kind's body against its generated definition (unknown fields at every depth
 * are dropped and returned; wrong types, ranges and formats are a 400), or undefined when the
 * resource has no generated definition.
 */
function checkBuiltin(resource: ApiResource, object: JsonObject): string[] | undefined {
  if (resource.crd !== undefined) return undefined;
  const definition = builtinDefinitionName(resource.group, resource.version, resource.kind);
  if (definition === undefined) return undefined;
  try {
    return [...checkBuiltinObject(definition, object, { prune: true }).unknown];
  } catch (error) {
    if (error instanceof BuiltinDecodeError) throw cannotBeHandled(resource, error.message);
    throw error;
  }
}

/**
 * Applies `fieldValidation` to a decoded body (in place): unknown fields are dropped — built-in
 * kinds by their generated Kubernetes 1.32 definitions at every depth (other kinds by their known
 * top-level and ObjectMeta fields), custom resources by the CRD module's pruning — and reported as `unknown field "x"` warnings (Warn, the default), not at all (Ignore),
 * or as a 400 `strict decoding error: unknown field "x", …` (Strict).
 */
export function handleUnknownFields(
  resource: ApiResource,
  object: JsonObject,
  validation: FieldValidation,
  extensions: ApiServerExtensions,
  warn: (text: string) => void,
): void {
  const builtin = checkBuiltin(resource, object);
  const unknown = builtin ?? pruneKnownShape(resource, object);
  const crd: KubeObject | undefined = resource.crd;
  if (crd !== undefined && extensions.pruneUnknownFields !== undefined) {
    unknown.push(...extensions.pruneUnknownFields(crd, resource.version, object));
  }
  const duplicates = takeDuplicateFields(object);
  if ((unknown.length === 0 && duplicates.length === 0) || validation === 'Ignore') return;
  const messages = [
    ...unknown.map((path) => `unknown field ${JSON.stringify(path)}`),
    ...duplicates.map((path) => `duplicate field ${JSON.stringify(path)}`),
  ];
  if (validation === 'Strict') {
    const cause = `strict decoding error: ${messages.join(', ')}`;
    throw builtin === undefined ? new BadRequestError(cause) : cannotBeHandled(resource, cause);
  }
  for (const message of messages) warn(message);
}
