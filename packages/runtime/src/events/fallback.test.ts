import { Store } from '@converge/store';
import { describe, expect, it } from 'vitest';
import { type Backend, NotFoundError, typeId } from '../backend/index.ts';
import type { KubeObject } from '../object/index.ts';
import { MemoryLogger, VirtualClock } from '../testing/index.ts';
import { createEventRecorder } from './backend-recorder.ts';
import { type CoreEvent, coreEventType, eventsV1Type } from './event-types.ts';

const T0 = Date.UTC(2024, 4, 6, 7, 8, 9);
const web: KubeObject = {
  apiVersion: 'example.com/v1',
  kind: 'Website',
  metadata: { name: 'web', namespace: 'shop', uid: 'uid-web' },
};

/** Counts calls per `operation typeId`, passing everything on to the store. */
function counting(store: Store): { backend: Backend; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const backend = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const type = args[0] as { group?: string; version?: string; plural?: string } | undefined;
        if (type?.plural !== undefined) {
          const key = `${String(property)} ${typeId(type as Parameters<typeof typeId>[0])}`;
          calls.set(key, (calls.get(key) ?? 0) + 1);
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { backend, calls };
}

function setup() {
  const clock = new VirtualClock({ startMs: T0 });
  const store = new Store({ clock, types: [coreEventType] });
  const { backend, calls } = counting(store);
  const logger = new MemoryLogger();
  const recorder = createEventRecorder({
    backend,
    component: 'website-controller',
    instance: 'a',
    clock,
    logger,
  });
  const events = async (): Promise<CoreEvent[]> => [...(await store.list<CoreEvent>(coreEventType)).items];
  return { clock, recorder, events, calls, logger };
}

describe('the core/v1 fallback', () => {
  it('writes a core/v1 Event when the backend does not serve events.k8s.io/v1', async () => {
    const { clock, recorder, events, logger } = setup();
    recorder.event(web, 'Warning', 'Failed', 'Deploy', 'image not found');
    await clock.advance(0);
    const [event] = await events();
    expect(event).toMatchObject({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { namespace: 'shop' },
      involvedObject: {
        apiVersion: 'example.com/v1',
        kind: 'Website',
        namespace: 'shop',
        name: 'web',
        uid: 'uid-web',
      },
      reason: 'Failed',
      message: 'image not found',
      source: { component: 'website-controller' },
      firstTimestamp: '2024-05-06T07:08:09Z',
      lastTimestamp: '2024-05-06T07:08:09Z',
      count: 1,
      type: 'Warning',
      action: 'Deploy',
      reportingComponent: 'website-controller',
      reportingInstance: 'a',
    });
    expect(recorder.stats()).toMatchObject({ api: 'v1', sent: 1, dropped: { error: 0 } });
    expect(logger.records.map((r) => r.message)).toContain(
      'events.k8s.io/v1 not served; writing core/v1 Events',
    );
  });

  it('switches once and remembers: later Events go straight to core/v1', async () => {
    const { clock, recorder, events, calls } = setup();
    recorder.event(web, 'Normal', 'A', 'Reconcile', 'ok');
    await clock.advance(0);
    for (const reason of ['B', 'C', 'D']) recorder.event(web, 'Normal', reason, 'Reconcile', 'ok');
    await clock.advance(0);
    expect(await events()).toHaveLength(4);
    expect(calls.get('create events.k8s.io/v1/events')).toBe(1);
    expect(calls.get('list events.k8s.io/v1/events')).toBe(1);
    expect(calls.get('create /v1/events')).toBe(4);
  });

  it('counts repeats in count and lastTimestamp of one core/v1 Event, at most every heartbeat', async () => {
    const { clock, recorder, events } = setup();
    recorder.event(web, 'Warning', 'BackOff', 'Reconcile', 'retrying');
    recorder.event(web, 'Warning', 'BackOff', 'Reconcile', 'retrying');
    await clock.advance(0);
    expect((await events())[0]).toMatchObject({ count: 2 });
    await clock.advance(5000);
    recorder.event(web, 'Warning', 'BackOff', 'Reconcile', 'retrying');
    await clock.advance(24_999);
    expect((await events())[0]?.count).toBe(2);
    await clock.advance(1);
    const all = await events();
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({
      count: 3,
      firstTimestamp: '2024-05-06T07:08:09Z',
      lastTimestamp: '2024-05-06T07:08:14Z',
    });
  });

  it('does not switch when events.k8s.io/v1 is served and a create answers NotFound for another reason', async () => {
    const clock = new VirtualClock({ startMs: T0 });
    const store = new Store({ clock, types: [eventsV1Type, coreEventType] });
    const backend = new Proxy(store, {
      get(target, property, receiver) {
        if (property === 'create') {
          return () =>
            Promise.reject(
              new NotFoundError('namespaces "shop" not found', {
                details: { kind: 'namespaces', name: 'shop' },
              }),
            );
        }
        const value = Reflect.get(target, property, receiver) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const logger = new MemoryLogger();
    const recorder = createEventRecorder({ backend, component: 'c', clock, logger });
    recorder.event(web, 'Normal', 'A', 'Reconcile', 'ok');
    await clock.advance(0);
    expect(recorder.stats()).toMatchObject({ api: 'events.k8s.io/v1', sent: 0, dropped: { error: 1 } });
    expect(logger.records.find((r) => r.message === 'Event dropped')?.fields.err).toMatchObject({
      code: 'CONVERGE_ERR_EVENTS_WRITE_FAILED',
      attempts: 1,
    });
  });

  it('drops and logs the Event when the backend serves neither Events API', async () => {
    const clock = new VirtualClock({ startMs: T0 });
    const store = new Store({ clock, types: [] });
    const logger = new MemoryLogger();
    const recorder = createEventRecorder({ backend: store, component: 'c', clock, logger });
    recorder.event(web, 'Normal', 'A', 'Reconcile', 'ok');
    await clock.advance(0);
    expect(recorder.stats()).toMatchObject({ api: 'v1', sent: 0, dropped: { error: 1 } });
    expect(clock.pendingTimers).toBe(0);
  });
});
