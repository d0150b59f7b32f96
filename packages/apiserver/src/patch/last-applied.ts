import { compareObjects } from './compare.ts';
import type { FieldSet } from './field-set.ts';
import { fieldSetOf } from './field-set-of.ts';
import { cloneJson, getOwn, goJson, isJsonObject, type JsonObject, ownKeys, setOwn } from './json.ts';
import type { PatchSchema } from './schema.ts';

/** The annotation where client-side `kubectl apply` keeps the configuration it applied last. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** The apiserver's limit on the total size of an object's annotations (keys and values), in bytes. */
const ANNOTATIONS_SIZE_LIMIT = 256 * 1024;

function annotationsOf(object: JsonObject): JsonObject | undefined {
  const metadata = getOwn(object, 'metadata');
  if (!isJsonObject(metadata)) return undefined;
  const annotations = getOwn(metadata, 'annotations');
  return isJsonObject(annotations) ? annotations : undefined;
}

function lastApplied(object: JsonObject): string | undefined {
  const value = annotationsOf(object)?.[LAST_APPLIED_ANNOTATION];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The fields a `kubectl apply --server-side` may take over without a conflict when it upgrades an
 * object managed by client-side apply: the fields of the last-applied annotation whose values the
 * live object still has. Undefined when there is no usable annotation.
 */
export function fieldsFromLastApplied(
  live: JsonObject,
  apiVersion: string,
  schema: PatchSchema | undefined,
): FieldSet | undefined {
  const text = lastApplied(live);
  if (text === undefined) return undefined;
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isJsonObject(config) || config.apiVersion !== apiVersion) return undefined;
  const changed = compareObjects(config, live, schema);
  return fieldSetOf(config, schema)
    .difference(changed.modified)
    .difference(changed.added)
    .difference(changed.removed);
}

/**
 * After an apply by `kubectl`, keeps an existing last-applied annotation in step with the applied
 * configuration (Go JSON of it without the annotation, newline-terminated), so that a later
 * client-side apply diffs against what was really applied. Drops the annotation when it would make
 * the annotations exceed their size limit. Changes `object` in place.
 */
export function syncLastApplied(object: JsonObject, applied: JsonObject): void {
  if (lastApplied(object) === undefined) return;
  const annotations = annotationsOf(object);
  if (annotations === undefined) return;
  const config = cloneJson(applied) as JsonObject;
  const configAnnotations = annotationsOf(config);
  if (configAnnotations !== undefined) delete configAnnotations[LAST_APPLIED_ANNOTATION];
  setOwn(annotations, LAST_APPLIED_ANNOTATION, `${goJson(config)}\n`);
  let size = 0;
  for (const key of ownKeys(annotations)) {
    const value = annotations[key];
    size += Buffer.byteLength(key) + Buffer.byteLength(typeof value === 'string' ? value : '');
  }
  if (size > ANNOTATIONS_SIZE_LIMIT) delete annotations[LAST_APPLIED_ANNOTATION];
}
