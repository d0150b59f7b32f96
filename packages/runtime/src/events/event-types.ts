import { type ResourceType, resourceType } from '../backend/index.ts';
import type { KubeObject } from '../object/index.ts';

/**
 * The two kinds of Kubernetes Events: `Normal` for progress, `Warning` for trouble.
 *
 * @example
 * const type: EventType = failed ? 'Warning' : 'Normal';
 */
export type EventType = 'Normal' | 'Warning';

/**
 * The `events.k8s.io/v1` Event kind: namespaced, no generation. The API the recorder writes first.
 *
 * @example
 * const store = new Store({ types: [eventsV1Type, coreEventType] });
 */
export const eventsV1Type: ResourceType<EventsV1Event> = resourceType<EventsV1Event>({
  group: 'events.k8s.io',
  version: 'v1',
  kind: 'Event',
  plural: 'events',
  namespaced: true,
  shortNames: ['ev'],
  generation: false,
});

/**
 * The core/v1 Event kind, the recorder's fallback when a backend does not serve `events.k8s.io/v1`.
 *
 * @example
 * const { items } = await backend.list<CoreEvent>(coreEventType, { namespace: 'default' });
 */
export const coreEventType: ResourceType<CoreEvent> = resourceType<CoreEvent>({
  group: '',
  version: 'v1',
  kind: 'Event',
  plural: 'events',
  namespaced: true,
  shortNames: ['ev'],
  generation: false,
});

/**
 * A reference to an object (Kubernetes `core/v1` ObjectReference), as Events carry it in
 * `regarding` / `involvedObject` and `related`. Empty fields are left out.
 *
 * @example
 * const ref: ObjectReference = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web', uid: '…' };
 */
export interface ObjectReference {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly fieldPath?: string;
}

/**
 * How often an `events.k8s.io/v1` Event happened: `count` >= 2, and when it was last seen.
 *
 * @example
 * const times = event.series?.count ?? 1;
 */
export interface EventSeries {
  readonly count: number;
  /** RFC 3339 with microseconds (`MicroTime`). */
  readonly lastObservedTime: string;
}

/**
 * An `events.k8s.io/v1` Event, as the recorder writes it.
 *
 * @example
 * const list = await backend.list<EventsV1Event>(eventsV1Type, { namespace: 'default' });
 * for (const e of list.items) console.log(e.type, e.reason, e.note, e.series?.count ?? 1);
 */
export interface EventsV1Event extends KubeObject {
  /** When the event was first observed, RFC 3339 with microseconds. */
  readonly eventTime: string;
  readonly series?: EventSeries;
  /** The recorder's `component`, e.g. `website-controller`. */
  readonly reportingController: string;
  /** The recorder's `instance`, e.g. `website-controller-pod-7f9c`. */
  readonly reportingInstance: string;
  readonly action: string;
  readonly reason: string;
  readonly regarding: ObjectReference;
  readonly related?: ObjectReference;
  /** At most 1 KiB (UTF-8). */
  readonly note: string;
  readonly type: EventType;
}

/**
 * Where a core/v1 Event comes from.
 *
 * @example
 * const source: CoreEventSource = { component: 'website-controller' };
 */
export interface CoreEventSource {
  readonly component?: string;
  readonly host?: string;
}

/**
 * A core/v1 Event, as the recorder writes it when `events.k8s.io/v1` is not served: repeats raise
 * `count` and `lastTimestamp`.
 *
 * @example
 * const list = await backend.list<CoreEvent>(coreEventType, { namespace: 'default' });
 * for (const e of list.items) console.log(e.type, e.reason, e.message, e.count);
 */
export interface CoreEvent extends KubeObject {
  readonly involvedObject: ObjectReference;
  readonly reason: string;
  /** At most 1 KiB (UTF-8). */
  readonly message: string;
  readonly source: CoreEventSource;
  /** RFC 3339, seconds. */
  readonly firstTimestamp: string;
  /** RFC 3339, seconds. */
  readonly lastTimestamp: string;
  readonly count: number;
  readonly type: EventType;
  readonly action?: string;
  readonly related?: ObjectReference;
  readonly reportingComponent?: string;
  readonly reportingInstance?: string;
}
