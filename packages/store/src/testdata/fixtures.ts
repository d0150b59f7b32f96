/**
 * Types, builders and helpers shared by the store's tests (not part of the public API).
 *
 * @module
 */
import type { KubeObject, ResourceType, WatchEvent, WatchOptions } from '@converge/runtime';
import { VirtualClock } from '@converge/runtime/testing';
import { Store } from '../store.ts';
import type { StoreOptions } from '../store-options.ts';

export const CM: ResourceType = {
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  namespaced: true,
  generation: false,
};
export const WIDGET: ResourceType = {
  group: 'example.com',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
  statusSubresource: true,
  requireResourceVersionOnUpdate: true,
};
export const CLUSTER_WIDGET: ResourceType = {
  group: 'example.com',
  version: 'v1',
  kind: 'ClusterWidget',
  plural: 'clusterwidgets',
  namespaced: false,
};
export const NAMESPACE: ResourceType = {
  group: '',
  version: 'v1',
  kind: 'Namespace',
  plural: 'namespaces',
  namespaced: false,
  generation: false,
};

export interface ConfigMap extends KubeObject {
  readonly data?: Readonly<Record<string, string>>;
}

export interface Widget extends KubeObject {
  readonly spec?: Readonly<Record<string, unknown>>;
  readonly status?: Readonly<Record<string, unknown>>;
}

/** A ConfigMap in `namespace` (default `default`). */
export function cm(
  name: string,
  data: Record<string, string> = {},
  meta: Record<string, unknown> = {},
): ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', ...meta }, data };
}

/** A Widget in `namespace` (default `default`). */
export function widget(
  name: string,
  spec: Record<string, unknown> = { size: 1 },
  meta: Record<string, unknown> = {},
): Widget {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name, namespace: 'default', ...meta },
    spec,
  };
}

/** A store on a virtual clock serving CM, WIDGET, CLUSTER_WIDGET and NAMESPACE. */
export function makeStore(options: StoreOptions = {}): { store: Store; clock: VirtualClock } {
  const clock = new VirtualClock({ startMs: Date.UTC(2024, 0, 1) });
  const store = new Store({ clock, types: [CM, WIDGET, CLUSTER_WIDGET, NAMESPACE], ...options });
  return { store, clock };
}

/** An owner reference to a stored object. */
export function ownerRef(
  owner: KubeObject,
  extra: { controller?: boolean; blockOwnerDeletion?: boolean } = {},
) {
  return {
    apiVersion: owner.apiVersion as string,
    kind: owner.kind as string,
    name: owner.metadata.name as string,
    uid: owner.metadata.uid as string,
    ...extra,
  };
}

/** Opens a watch and reads it step by step (no real waiting: pending reads are raced with a tick). */
export class Reader<T extends KubeObject = KubeObject> {
  readonly iterator: AsyncIterator<WatchEvent<T>>;
  readonly abort = new AbortController();
  #pending: Promise<IteratorResult<WatchEvent<T>>> | undefined;

  constructor(store: Store, type: ResourceType, options: WatchOptions = {}) {
    this.iterator = store.watch<T>(type, { signal: this.abort.signal, ...options })[Symbol.asyncIterator]();
  }

  /** The next result if one is ready within a few macrotasks, else 'pending'. */
  async poll(): Promise<IteratorResult<WatchEvent<T>> | 'pending'> {
    this.#pending ??= this.iterator.next();
    const pending = this.#pending;
    const tick = new Promise<'pending'>((resolve) =>
      setImmediate(() => setImmediate(() => resolve('pending'))),
    );
    const result = await Promise.race([pending, tick]);
    if (result !== 'pending') this.#pending = undefined;
    return result;
  }

  /** The next event; fails if none is ready or the watch ended. */
  async next(): Promise<WatchEvent<T>> {
    const result = await this.poll();
    if (result === 'pending') throw new Error('no watch event is ready');
    if (result.done === true) throw new Error('the watch ended');
    return result.value;
  }

  /** Reads every ready event. */
  async drain(): Promise<WatchEvent<T>[]> {
    const events: WatchEvent<T>[] = [];
    for (;;) {
      const result = await this.poll();
      if (result === 'pending' || result.done === true) return events;
      events.push(result.value);
    }
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.iterator.return?.();
  }
}

/** `TYPE name@rv` of object events, `BOOKMARK@rv` of bookmarks. */
export function describeEvents(events: readonly WatchEvent[]): string[] {
  return events.map((e) =>
    e.type === 'BOOKMARK'
      ? `BOOKMARK@${e.resourceVersion}${e.initialEventsEnd === true ? ' end' : ''}`
      : `${e.type} ${e.object.metadata.name}@${e.object.metadata.resourceVersion}`,
  );
}
