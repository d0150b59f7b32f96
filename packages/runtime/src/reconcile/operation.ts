import type { Cause } from '../workqueue/index.ts';

/**
 * What happened to a reconcile's primary object, in Kumori's terms: `put` (created, changed or
 * re-read), `delete` (removed, history kept), `purge` (removed with its history: a NATS KV
 * purge), or `secondary` (only objects it owns or points at changed).
 */
export type PrimaryOperation = 'put' | 'delete' | 'purge' | 'secondary';

/**
 * Kumori's `Operation` of a reconcile, from its causes (`context.causes`): the latest cause about
 * the primary itself decides — `added`, `modified` and `resync` are a put, `deleted` a delete, or a
 * purge when `purged`. Without one, a cause from a secondary makes it `secondary`. Undefined when
 * no cause tells (`generic` events, requeues, manual enqueues, or only causes let go by the cap):
 * read the current state, as a level-based reconciler always does.
 *
 * Causes are a hint about the past, the cache is the truth now: an object deleted and created
 * again between two runs is a `put`, and a `delete` whose object is back in the cache was
 * followed by a create the run does not know of yet.
 *
 * @example
 * async reconcile(key, { causes }) {
 *   switch (operationOf(causes)) {
 *     case 'purge': return purgeSecondaries(key);
 *     case 'delete': return deleteSecondaries(key);
 *     default: return sync(key); // put, secondary, or unknown
 *   }
 * }
 */
export function operationOf(causes: readonly Cause[]): PrimaryOperation | undefined {
  let secondary = false;
  for (let i = causes.length - 1; i >= 0; i--) {
    const cause = causes[i] as Cause;
    if (cause.secondary === true) {
      secondary = true;
      continue;
    }
    switch (cause.type) {
      case 'added':
      case 'modified':
      case 'resync':
        return 'put';
      case 'deleted':
        return cause.purged === true ? 'purge' : 'delete';
      case 'generic':
      case 'requeue-after':
      case 'requeue':
      case 'retry':
      case 'manual':
        break;
    }
  }
  return secondary ? 'secondary' : undefined;
}
