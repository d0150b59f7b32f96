import type { ObjectEvent } from '../event/index.ts';
import type { Cause, CauseObject, CauseType } from '../workqueue/index.ts';

/** Options of {@link eventCause}. */
export interface EventCauseOptions {
  /** The key enqueued is not the event's object but one it points at (owner, map function). */
  readonly secondary?: boolean;
  /** The name of the source. Default none (`fromEventSource` fills in its own name). */
  readonly source?: string;
}

/**
 * The cause an object event gives the keys it enqueues: `create` → `added` (with `initialList`
 * for creates of an initial list), `update` → `modified` (or `resync` for resync updates),
 * `delete` → `deleted` (with `finalStateUnknown` for tombstones and `purged` for KV purges),
 * `generic` → `generic`; and a reference to the object (kind, namespace, name, uid,
 * resourceVersion — of the new object for updates), never the object itself. Frozen.
 *
 * Handlers pass it with their adds; the `enqueue*` handlers already do.
 *
 * @example
 * handler: { handle: (event, queue) => queue.add(keyOf(event.object), { cause: eventCause(event) }) }
 */
export function eventCause(event: ObjectEvent<unknown>, options: EventCauseOptions = NO_OPTIONS): Cause {
  let type: CauseType;
  switch (event.type) {
    case 'create':
      type = 'added';
      break;
    case 'update':
      type = event.isResync === true ? 'resync' : 'modified';
      break;
    case 'delete':
      type = 'deleted';
      break;
    case 'generic':
      type = 'generic';
      break;
  }
  // Built in place, its fields in this order, with no object spread per field.
  const cause: {
    type: CauseType;
    source?: string;
    object?: CauseObject;
    secondary?: boolean;
    initialList?: boolean;
    finalStateUnknown?: boolean;
    purged?: boolean;
  } = { type };
  if (options.source !== undefined) cause.source = options.source;
  const object = causeObjectOf(event.object);
  if (object !== undefined) cause.object = object;
  if (options.secondary === true) cause.secondary = true;
  if (event.type === 'create') {
    if (event.isInInitialList === true) cause.initialList = true;
  } else if (event.type === 'delete') {
    if (event.finalStateUnknown === true) cause.finalStateUnknown = true;
    if (event.purged === true) cause.purged = true;
  }
  return Object.freeze(cause) as Cause;
}

const NO_OPTIONS: EventCauseOptions = Object.freeze({});

/**
 * A reference to an object: its kind and the namespace, name, uid and resourceVersion of its
 * metadata, those that are strings (an empty namespace is left out), and its generation when it is
 * a number. Undefined for values without
 * `metadata` (a poller's plain items). Frozen.
 */
export function causeObjectOf(object: unknown): CauseObject | undefined {
  if (typeof object !== 'object' || object === null) return undefined;
  const { kind, metadata } = object as { kind?: unknown; metadata?: unknown };
  if (typeof metadata !== 'object' || metadata === null) return undefined;
  const { namespace, name, uid, resourceVersion, generation } = metadata as Record<string, unknown>;
  const ref: { -readonly [F in keyof CauseObject]: CauseObject[F] } = {};
  if (typeof kind === 'string') ref.kind = kind;
  if (typeof namespace === 'string' && namespace !== '') ref.namespace = namespace;
  if (typeof name === 'string') ref.name = name;
  if (typeof uid === 'string') ref.uid = uid;
  if (typeof resourceVersion === 'string') ref.resourceVersion = resourceVersion;
  if (typeof generation === 'number') ref.generation = generation;
  return Object.freeze(ref);
}

/**
 * The cause of adding `request` for `event`: {@link eventCause}, marked `secondary` when the
 * request does not name the event's own object (see `fromEventSource`, which gives it to adds
 * that name no cause).
 *
 * @example
 * eventCauseFor({ type: 'update', oldObject: pod, object: pod }, { namespace: 'ns', name: 'owner' }); // secondary
 */
export function eventCauseFor(
  event: ObjectEvent<unknown>,
  request: unknown,
  options: EventCauseOptions = {},
): Cause {
  const secondary = options.secondary ?? !isOwnRequest(request, event.object);
  return eventCause(event, { ...options, secondary });
}

/**
 * Whether `request` names the event's own object (`name`, `namespace/name`, or an object with
 * that `namespace` and `name`) rather than another one. True when it cannot tell (objects
 * without metadata, requests of another shape).
 */
function isOwnRequest(request: unknown, object: unknown): boolean {
  if (typeof object !== 'object' || object === null) return true;
  const metadata = (object as { metadata?: unknown }).metadata;
  if (typeof metadata !== 'object' || metadata === null) return true;
  const { namespace, name } = metadata as { namespace?: unknown; name?: unknown };
  if (typeof name !== 'string') return true;
  const ns = typeof namespace === 'string' ? namespace : '';
  if (typeof request === 'string') return request === name || request === `${ns}/${name}`;
  if (typeof request !== 'object' || request === null) return true;
  const r = request as { namespace?: unknown; name?: unknown };
  if (typeof r.name !== 'string') return true;
  return r.name === name && (typeof r.namespace === 'string' ? r.namespace : '') === ns;
}
