import { BadRequestError, type ResourceType } from '@converge/runtime';
import { type JsonObject, validateMeta } from '@converge/store';
import { HttpStatusError } from './errors.ts';
import { invalidObject } from './field-causes.ts';

/**
 * The bounds on the work one request may make the server do, as kube-apiserver bounds it (and
 * where it does not, documented choices). Every bound answers a typed 4xx `metav1.Status`.
 *
 * | bound | value | answer |
 * | --- | --- | --- |
 * | request body | 3 MiB (`MaxRequestBodyBytes`) | 413 RequestEntityTooLarge |
 * | serialized object | 1.5 MiB (etcd's `--max-request-bytes`), after validation | 413 RequestEntityTooLarge |
 * | ConfigMap / Secret data | 1 MiB (`MaxSecretSize`) | 422 Invalid, cause FieldValueTooLong |
 * | JSON patch operations | 10 000 (`maxJSONPatchOperations`) | 413 RequestEntityTooLarge |
 * | JSON patch `copy` growth | 1.5 MiB (kube-apiserver: 3 MiB; no result over the object limit is kept anyway) | 422 Invalid |
 * | JSON / YAML nesting | 200 levels | 400 BadRequest |
 * | JSON / YAML keys (object members and array elements) | 50 000 (none in kube-apiserver) | 413 RequestEntityTooLarge |
 * | YAML aliases | 100 expansions (`maxAliasCount`) | 400 BadRequest |
 *
 * The nesting bound is far lower than kube-apiserver's 10 000: the store keeps objects at most
 * 256 levels deep, and an object's `managedFields` mirror it a few levels further down, so 200
 * is what can be stored; the server's own handlers (schemas, field ownership, strategic merge)
 * walk objects recursively. No Kubernetes object comes near it.
 *
 * The key bound has no kube-apiserver counterpart: its decoders are linear and fast, so 3 MiB is
 * bound enough. Converge's decoding, validation and field tracking cost 7–15 µs per key (4–7 for
 * the keys of a nested custom resource), so a 1.3 MB body of 100 000 short keys stalled every
 * client for a second before the object size check refused it; writes of bodies over 64 KiB also
 * yield between their stages (stage-yield.ts). The body text is counted before it is parsed (a linear scan, a
 * few ms for 3 MiB); 50 000 keys admits any CRD the store can hold (real schemas carry 30+ bytes
 * per key, and a stored object is at most 1.5 MiB).
 */
export const LIMITS = {
  maxBodyBytes: 3 * 1024 * 1024,
  maxObjectBytes: 1.5 * 1024 * 1024,
  maxConfigDataBytes: 1024 * 1024,
  maxJsonPatchOperations: 10_000,
  maxJsonPatchCopyBytes: 1.5 * 1024 * 1024,
  maxDepth: 200,
  maxKeys: 50_000,
  maxYamlAliases: 100,
} as const;

/** Stable codes of the bounds this module enforces with an HTTP-only status (413). */
export const LimitErrorCodes = {
  /** The object, serialized, is over the 1.5 MiB per-object limit (413). */
  OBJECT_TOO_LARGE: 'CONVERGE_ERR_APISERVER_OBJECT_TOO_LARGE',
  /** A JSON patch holds more than 10 000 operations (413). */
  JSON_PATCH_TOO_MANY_OPERATIONS: 'CONVERGE_ERR_APISERVER_JSON_PATCH_TOO_MANY_OPERATIONS',
  /** A JSON or YAML body holds more than 50 000 object members and array elements (413). */
  BODY_TOO_MANY_KEYS: 'CONVERGE_ERR_APISERVER_BODY_TOO_MANY_KEYS',
} as const;

/** 413 for a body holding more than {@link LIMITS}.maxKeys keys, refused before it is parsed. */
export function tooManyKeys(format: string, max: number = LIMITS.maxKeys): HttpStatusError {
  return new HttpStatusError(
    LimitErrorCodes.BODY_TOO_MANY_KEYS,
    413,
    'RequestEntityTooLarge',
    `Request entity too large: the ${format} body holds more than ${max} keys (object members and array elements)`,
  );
}

/** 413 for an object whose serialized size is over {@link LIMITS}.maxObjectBytes. */
export function objectTooLarge(size: number): HttpStatusError {
  return new HttpStatusError(
    LimitErrorCodes.OBJECT_TOO_LARGE,
    413,
    'RequestEntityTooLarge',
    `Request entity too large: the object is ${size} bytes serialized, the limit is ${LIMITS.maxObjectBytes}`,
  );
}

/** 413 `The allowed maximum operations in a JSON patch is 10000, got N` (kube-apiserver's words). */
export function tooManyPatchOperations(count: number): HttpStatusError {
  return new HttpStatusError(
    LimitErrorCodes.JSON_PATCH_TOO_MANY_OPERATIONS,
    413,
    'RequestEntityTooLarge',
    `The allowed maximum operations in a JSON patch is ${LIMITS.maxJsonPatchOperations}, got ${count}`,
  );
}

/** Throws the 413 when `object` serializes to more than the per-object limit. */
export function checkObjectSize(object: unknown): void {
  const size = Buffer.byteLength(JSON.stringify(object) ?? '', 'utf8');
  if (size > LIMITS.maxObjectBytes) throw objectTooLarge(size);
}

/**
 * The per-object limit where kube-apiserver meets etcd's, after validation: the store validates
 * ObjectMeta itself, after this check, so an object over the limit is first given the store's
 * metadata validation, and an invalid one is its 422 (a 2 MB annotation is `metadata.annotations:
 * Too long: must have at most 262144 bytes`, as kube-apiserver answers); a valid one is the 413.
 * A `generateName` stands in for the name the store would generate.
 */
export function checkStoredObjectSize(
  type: ResourceType,
  object: {
    readonly metadata: { readonly name?: string | undefined; readonly generateName?: string | undefined };
  },
  creating: boolean,
): void {
  const size = Buffer.byteLength(JSON.stringify(object) ?? '', 'utf8');
  if (size <= LIMITS.maxObjectBytes) return;
  const { name, generateName } = object.metadata;
  const named =
    creating && (name ?? '') === '' && typeof generateName === 'string' && generateName !== ''
      ? { ...object, metadata: { ...object.metadata, name: `${generateName}xxxxx` } }
      : object;
  const causes = validateMeta(type, named as unknown as JsonObject, creating);
  if (causes.length > 0) throw invalidObject(type.kind, type.group, String(name ?? ''), causes);
  throw objectTooLarge(size);
}

function tooDeep(format: string, max: number): BadRequestError {
  return new BadRequestError(`${format} parse error: the body nests deeper than ${max} levels`);
}

/**
 * Checks JSON text's nesting depth (400 past `maxDepth`) and its keys, object members and array
 * elements (413 past `maxKeys`), in one pass over its characters before it is parsed (a body nested
 * 100 000 deep is a 400 at the cost of reading it once). A container counts one key and each comma
 * between its members one more (so `{}` and `[]` count one: an over-estimate by one per empty
 * container); brackets inside strings do not count. Malformed text is left to the parser. With
 * `format` 'yaml' (and `maxKeys` Infinity) it is also a cheap pre-scan of YAML's flow collections:
 * an over-estimate only for more than `maxDepth` unclosed brackets inside block scalars.
 */
export function checkJsonShape(
  text: string,
  maxDepth: number = LIMITS.maxDepth,
  maxKeys: number = LIMITS.maxKeys,
  format: 'json' | 'yaml' = 'json',
): void {
  let depth = 0;
  let keys = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) {
      inString = true;
    } else if (c === 44 /* , */) {
      if (++keys > maxKeys) throw tooManyKeys(format, maxKeys);
    } else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > maxDepth) throw tooDeep(format, maxDepth);
      if (++keys > maxKeys) throw tooManyKeys(format, maxKeys);
    } else if (c === 93 /* ] */ || c === 125 /* } */) {
      depth--;
    }
  }
}

/**
 * Estimates the keys of YAML text, before the YAML parser runs: block mapping keys (a `:` followed
 * by a space or a line end), block sequence items (a `-` followed by a space or a line end, first
 * on its line or after another item's `- `), flow separators and containers (`,`, `[`, `{`) and
 * aliases (`*`). Quoted strings, comments and block scalars are not told apart, so text in them can
 * only raise the count: an over-estimate, never an under-estimate. 413 past `maxKeys`; a line
 * opening more than `maxDepth` nested items (`- - - …`) is a 400, as the parser would answer.
 */
export function checkYamlKeys(
  text: string,
  maxKeys: number = LIMITS.maxKeys,
  maxDepth: number = LIMITS.maxDepth,
): void {
  let keys = 0;
  // how many items the current line opened so far; -1 once past its first other token
  let items = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 /* \n */) {
      items = 0;
      continue;
    }
    if (c === 32 || c === 9) continue;
    const next = text.charCodeAt(i + 1);
    const spaceOrEnd = next === 32 || next === 10 || next === 13 || next === 9 || Number.isNaN(next);
    let counted = false;
    if (c === 45 /* - */ && items >= 0 && spaceOrEnd) {
      if (++items > maxDepth) throw tooDeep('yaml', maxDepth);
      counted = true;
    } else {
      items = -1;
      counted =
        (c === 58 /* : */ && spaceOrEnd) ||
        c === 44 /* , */ ||
        c === 91 /* [ */ ||
        c === 123 /* { */ ||
        c === 42; /* * */
    }
    if (counted && ++keys > maxKeys) throw tooManyKeys('yaml', maxKeys);
  }
}

/**
 * The nesting depth of a JSON value, iteratively, or `Infinity` once it passes `max` (so the
 * walk stops early). For values built by patches, whose depth the body check cannot see.
 */
export function depthWithin(value: unknown, max: number = LIMITS.maxDepth): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [item, depth] = next;
    if (typeof item !== 'object' || item === null) continue;
    const level = depth + 1;
    if (level > max) return Number.POSITIVE_INFINITY;
    if (level > deepest) deepest = level;
    for (const member of Array.isArray(item) ? item : Object.values(item)) {
      if (typeof member === 'object' && member !== null) stack.push([member, level]);
    }
  }
  return deepest;
}

/** Throws a 400 when a decoded or patched value nests deeper than {@link LIMITS}.maxDepth. */
export function checkValueDepth(value: unknown, format: string): void {
  if (depthWithin(value) === Number.POSITIVE_INFINITY) throw tooDeep(format, LIMITS.maxDepth);
}
