/**
 * Patches over JSON values, with the semantics Kubernetes gives them: JSON merge patch (RFC 7386,
 * `application/merge-patch+json`) and JSON patch (RFC 6902, `application/json-patch+json`). Every
 * function is pure — inputs are never mutated, results share nothing with them — and treats keys
 * such as `__proto__` and `constructor` as plain data.
 *
 * - {@link applyMergePatch} / {@link createMergePatch} — apply and compute merge patches
 * - {@link applyJsonPatch} — all-or-nothing JSON patch; a malformed patch is a 400
 *   (`BadRequestError`), an operation that fails is a 422 (`InvalidError`)
 * - {@link deepEqual} — JSON value equality, object key order irrelevant
 *
 * @example
 * const desired = applyMergePatch(live, { metadata: { labels: { team: 'web', stale: null } } });
 * if (!deepEqual(live, desired)) await client.patch(type, key, { type: 'merge', patch: createMergePatch(live, desired) });
 *
 * @module
 */
export { createMergePatch } from './create-merge-patch.ts';
export { deepEqual } from './deep-equal.ts';
export { applyJsonPatch, type JsonPatchOptions } from './json-patch.ts';
export { applyMergePatch } from './merge-patch.ts';
