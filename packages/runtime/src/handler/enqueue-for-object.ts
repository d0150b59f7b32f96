import { type KubeObject, type ObjectKey, objectKey } from '../object/index.ts';
import type { EventHandler } from './handler.ts';
import { addOptionsFor, type EnqueueHandlerOptions, priorityOption } from './priority.ts';

/**
 * Enqueues the key (`{ namespace, name }`) of the object an event is about (controller-runtime's
 * `EnqueueRequestForObject`): the object of creates, deletes and generic events, the new object of
 * updates. Deletes whose final state is unknown (tombstones) still enqueue the key of the last known
 * state, so the reconciler learns the object is gone.
 *
 * Initial-list creates and resync updates are added at low priority unless `priority` is given.
 * The cause of each add is the event's ({@link eventCause}).
 *
 * @example
 * const source = fromEventSource(informer, enqueueForObject());
 */
export function enqueueForObject<T extends Pick<KubeObject, 'metadata'>>(
  options: EnqueueHandlerOptions = {},
): EventHandler<T, ObjectKey> {
  const fixed = priorityOption(options.priority);
  return {
    handle(event, queue): void {
      queue.add(objectKey(event.object), addOptionsFor(event, fixed, false, queue));
    },
  };
}
