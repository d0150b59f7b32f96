import { BadRequestError, type KubeObject } from '@converge/runtime';
import type { ApiResource, JsonObject } from './api-resource.ts';
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

/**
 * Applies `fieldValidation` to a decoded body (in place): unknown fields are dropped — built-in
 * kinds by their known top-level and ObjectMeta fields, custom resources by the CRD module's
 * pruning — and reported as `unknown field "x"` warnings (Warn, the default), not at all (Ignore),
 * or as a 400 `strict decoding error: unknown field "x", …` (Strict).
 */
export function handleUnknownFields(
  resource: ApiResource,
  object: JsonObject,
  validation: FieldValidation,
  extensions: ApiServerExtensions,
  warn: (text: string) => void,
): void {
  const unknown = pruneKnownShape(resource, object);
  const crd: KubeObject | undefined = resource.crd;
  if (crd !== undefined && extensions.pruneUnknownFields !== undefined) {
    unknown.push(...extensions.pruneUnknownFields(crd, resource.version, object));
  }
  if (unknown.length === 0 || validation === 'Ignore') return;
  const messages = unknown.map((path) => `unknown field ${JSON.stringify(path)}`);
  if (validation === 'Strict') throw new BadRequestError(`strict decoding error: ${messages.join(', ')}`);
  for (const message of messages) warn(message);
}
