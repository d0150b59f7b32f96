/**
 * Event handlers: they turn object events into requests on a queue (controller-runtime's
 * `handler` package). Requests carry keys, never events; the reconciler reads current state.
 *
 * - {@link enqueueForObject}: the event's own `{ namespace, name }`.
 * - {@link enqueueFromMapFunction}: whatever a function maps the object to (old and new on updates).
 * - {@link enqueueForOwner}: the owners named in `metadata.ownerReferences`.
 * - {@link handlerFuncs}: one callback per event type.
 *
 * Every handler adds initial-list creates and resync updates at low priority
 * ({@link eventPriority}) so a startup backlog never delays fresh changes, and gives every add the
 * event's cause ({@link eventCause}: added, modified, deleted, resync… and the object's reference;
 * `secondary` for owners and mapped requests), so a reconcile can tell why it runs. Filter events before they
 * reach a handler with predicates (`withPredicates` in the predicate module).
 *
 * @example
 * const handler = enqueueForOwner<Pod>({ ownerKind: 'ReplicaSet', ownerGroup: 'apps', onlyController: true });
 * handler.handle({ type: 'create', object: pod }, queue);
 *
 * @module
 */
export { enqueueForObject } from './enqueue-for-object.ts';
export { type EnqueueForOwnerOptions, enqueueForOwner, type OwnerType } from './enqueue-for-owner.ts';
export {
  type EnqueueFromMapFunctionOptions,
  enqueueFromMapFunction,
  type MapFunction,
} from './enqueue-from-map-function.ts';
export { causeObjectOf, type EventCauseOptions, eventCause, eventCauseFor } from './event-cause.ts';
export { EVENT_CAUSE, type EventCauseProvider, type EventHandler, type RequestQueue } from './handler.ts';
export { type HandlerFuncs, handlerFuncs } from './handler-funcs.ts';
export { type EnqueueHandlerOptions, eventPriority } from './priority.ts';
