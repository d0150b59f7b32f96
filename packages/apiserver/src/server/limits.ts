import { BadRequestError } from '@converge/runtime';
import { HttpStatusError } from './errors.ts';

/**
 * The bounds on the work one request may make the server do, as kube-apiserver bounds it (and
 * where it does not, documented choices). Every bound answers a typed 4xx `metav1.Status`.
 *
 * | bound | value | answer |
 * | --- | --- | --- |
 * | request body | 3 MiB (`MaxRequestBodyBytes`) | 413 RequestEntityTooLarge |
 * | serialized object | 1.5 MiB (etcd's `--max-request-bytes`) | 413 RequestEntityTooLarge |
 * | ConfigMap / Secret data | 1 MiB (`MaxSecretSize`) | 422 Invalid, cause FieldValueTooLong |
 * | JSON patch operations | 10 000 (`maxJSONPatchOperations`) | 413 RequestEntityTooLarge |
 * | JSON patch `copy` growth | 1.5 MiB (kube-apiserver: 3 MiB; no result over the object limit is kept anyway) | 422 Invalid |
 * | JSON / YAML nesting | 200 levels | 400 BadRequest |
 * | YAML aliases | 100 expansions (`maxAliasCount`) | 400 BadRequest |
 *
 * The nesting bound is far lower than kube-apiserver's 10 000: the store keeps objects at most
 * 256 levels deep, and an object's `managedFields` mirror it a few levels further down, so 200
 * is what can be stored; the server's own handlers (schemas, field ownership, strategic merge)
 * walk objects recursively. No Kubernetes object comes near it.
 */
export const LIMITS = {
  maxBodyBytes: 3 * 1024 * 1024,
  maxObjectBytes: 1.5 * 1024 * 1024,
  maxConfigDataBytes: 1024 * 1024,
  maxJsonPatchOperations: 10_000,
  maxJsonPatchCopyBytes: 1.5 * 1024 * 1024,
  maxDepth: 200,
  maxYamlAliases: 100,
} as const;

/** Stable codes of the bounds this module enforces with an HTTP-only status (413). */
export const LimitErrorCodes = {
  /** The object, serialized, is over the 1.5 MiB per-object limit (413). */
  OBJECT_TOO_LARGE: 'CONVERGE_ERR_APISERVER_OBJECT_TOO_LARGE',
  /** A JSON patch holds more than 10 000 operations (413). */
  JSON_PATCH_TOO_MANY_OPERATIONS: 'CONVERGE_ERR_APISERVER_JSON_PATCH_TOO_MANY_OPERATIONS',
} as const;

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

function tooDeep(format: string, max: number): BadRequestError {
  return new BadRequestError(`${format} parse error: the body nests deeper than ${max} levels`);
}

/**
 * Checks JSON text's nesting depth in one pass over its characters, before it is parsed (so a
 * body nested 100 000 deep is a 400 at the cost of reading it once). Brackets inside strings do
 * not count. Malformed text is left to the parser. Also a cheap pre-scan of YAML's flow
 * collections (`format` 'yaml'): an over-estimate only for more than `max` unclosed brackets
 * inside block scalars.
 */
export function checkJsonDepth(text: string, max: number = LIMITS.maxDepth, format = 'json'): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) {
      inString = true;
    } else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > max) throw tooDeep(format, max);
    } else if (c === 93 /* ] */ || c === 125 /* } */) {
      depth--;
    }
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
