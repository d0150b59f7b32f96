import type { KubeObject } from '../object/index.ts';
import { exponentialBackoffRetryPolicy, type RetryPolicy } from '../workqueue/index.ts';
import type { PendingRetry, ResourceAction, RetryDequeuePolicy } from './types.ts';

/**
 * The retry policy an {@link InformerController} uses unless told otherwise: grafana app-sdk's
 * `DefaultRetryPolicy`, `exponentialBackoffRetryPolicy(5_000, 5)`. A call that always fails is
 * made 7 times: once for the event, then retried after 5, 10, 20, 40, 80 and 160 s.
 */
export const defaultWatcherRetryPolicy: RetryPolicy = exponentialBackoffRetryPolicy(5_000, 5);

/**
 * grafana app-sdk's `OpinionatedRetryDequeuePolicy`: when a new event arrives for an object, a
 * pending retry of the same handler and object is dropped (true) or kept (false) by this table,
 * first match wins:
 *
 * | new event                                   | pending retry |
 * | ------------------------------------------- | ------------- |
 * | a delete                                    | dropped       |
 * | another action than the retry's             | kept          |
 * | same action, same generation as the retry's | kept          |
 * | same action, another generation             | dropped       |
 *
 * A create retry survives an update (the create still has to succeed); a delete makes every retry
 * moot; an update of a newer spec replaces the retry of an older one. The generation is
 * `metadata.generation`: a number, or a string of an integer; anything else counts as 0.
 *
 * @example
 * const controller = new InformerController({ retryDequeuePolicy: opinionatedRetryDequeuePolicy });
 */
export const opinionatedRetryDequeuePolicy: RetryDequeuePolicy = <T extends KubeObject>(
  newAction: ResourceAction,
  newObject: T,
  retry: PendingRetry<T>,
): boolean => {
  if (newAction === 'delete') return true;
  if (newAction !== retry.action) return false;
  return generationOf(newObject) !== generationOf(retry.object);
};

const INTEGER = /^[+-]?\d+$/;

/**
 * An object's `metadata.generation` as app-sdk reads it: a finite number as is, a string of an
 * integer parsed, anything else (missing, not a number, a non-integer string) 0.
 */
export function generationOf(object: unknown): number {
  const metadata = (object as { metadata?: unknown } | null | undefined)?.metadata;
  if (typeof metadata !== 'object' || metadata === null) return 0;
  const generation: unknown = (metadata as { generation?: unknown }).generation;
  if (typeof generation === 'number') return Number.isFinite(generation) ? generation : 0;
  if (typeof generation === 'string' && INTEGER.test(generation)) {
    const parsed = Number(generation);
    return Number.isSafeInteger(parsed) ? parsed : 0;
  }
  return 0;
}
