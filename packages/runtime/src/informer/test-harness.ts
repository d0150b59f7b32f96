import { type ResourceType, resourceType } from '../backend/index.ts';
import type { ObjectEvent } from '../event/index.ts';
import { MemoryLogger } from '../log/index.ts';
import type { KubeObject } from '../object/index.ts';
import { VirtualClock } from '../testing/index.ts';
import { Informer } from './informer.ts';
import type { InformerOptions } from './options.ts';
import { FakeBackend, settle } from './testing/index.ts';

/** Shared fixtures of the informer tests (not part of the public API). */

export const configMaps: ResourceType = resourceType({
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  namespaced: true,
});

export interface ConfigMap extends KubeObject {
  readonly data?: Readonly<Record<string, string>>;
}

export function configMap(
  name: string,
  options: { namespace?: string; data?: Record<string, string>; labels?: Record<string, string> } = {},
): ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace: options.namespace ?? 'default',
      ...(options.labels === undefined ? {} : { labels: options.labels }),
    },
    data: options.data ?? { v: '0' },
  };
}

/** Objects sorted by key, for comparing a cache with a backend. */
export function sorted<T extends KubeObject>(objects: readonly T[]): T[] {
  const key = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
  return [...objects].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** Replays informer events onto a map, recording every inconsistency (an update of an unknown key, …). */
export class EventReplay<T extends KubeObject> {
  readonly events: ObjectEvent<T>[] = [];
  readonly state = new Map<string, T>();
  readonly violations: string[] = [];

  readonly listener = (event: ObjectEvent<T>): void => {
    this.events.push(event);
    const key = `${event.object.metadata.namespace ?? ''}/${event.object.metadata.name ?? ''}`;
    const held = this.state.get(key);
    switch (event.type) {
      case 'create':
        if (held !== undefined) this.violations.push(`create of known ${key}`);
        this.state.set(key, event.object);
        break;
      case 'update':
        if (held !== event.oldObject)
          this.violations.push(`update of ${key} with an oldObject that is not the last state`);
        this.state.set(key, event.object);
        break;
      case 'delete':
        if (held === undefined) this.violations.push(`delete of unknown ${key}`);
        this.state.delete(key);
        break;
      case 'generic':
        this.violations.push(`generic event for ${key}`);
        break;
    }
  };

  /** The replayed state, sorted by key. */
  objects(): T[] {
    return sorted([...this.state.values()]);
  }

  clear(): void {
    this.events.length = 0;
  }
}

export interface Harness {
  readonly clock: VirtualClock;
  readonly backend: FakeBackend;
  readonly logger: MemoryLogger;
  readonly informer: Informer<ConfigMap>;
  readonly replay: EventReplay<ConfigMap>;
  readonly controller: AbortController;
  readonly run: Promise<void>;
  stop(): Promise<void>;
  /** The backend's objects of the informer's kind, sorted. */
  backendObjects(): ConfigMap[];
  /** The cache's objects, sorted. */
  cacheObjects(): ConfigMap[];
}

/**
 * A started informer over a fake backend holding `initial`, on a virtual clock, with an event
 * replay subscribed before start; `prepare` runs on the backend before the start. Settles once so
 * the first list ran. Lists are paginated unless `options.initialList` says otherwise.
 */
export async function startInformer(
  initial: readonly ConfigMap[] = [],
  options: Partial<InformerOptions<ConfigMap>> = {},
  backendOptions: {
    historyLimit?: number;
    prepare?: (backend: FakeBackend, clock: VirtualClock) => void;
  } = {},
): Promise<Harness> {
  const clock = options.clock instanceof VirtualClock ? options.clock : new VirtualClock();
  const { prepare, ...fakeOptions } = backendOptions;
  const backend = new FakeBackend({ clock, ...fakeOptions });
  for (const object of initial) backend.set(configMaps, object);
  prepare?.(backend, clock);
  const logger = new MemoryLogger();
  const informer = new Informer<ConfigMap>({
    backend,
    type: configMaps,
    clock,
    logger,
    initialList: 'paginated',
    ...options,
  });
  const replay = new EventReplay<ConfigMap>();
  informer.subscribe(replay.listener);
  const controller = new AbortController();
  const run = informer.start(controller.signal);
  await settle();
  return {
    clock,
    backend,
    logger,
    informer,
    replay,
    controller,
    run,
    stop: async () => {
      controller.abort();
      await run;
    },
    backendObjects: () => backend.objects<ConfigMap>(configMaps),
    cacheObjects: () => sorted(informer.cache.list()),
  };
}
