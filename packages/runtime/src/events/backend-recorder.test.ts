import { Store } from '@converge/store';
import { describe, expect, it } from 'vitest';
import type { ResourceType } from '../backend/index.ts';
import type { KubeObject } from '../object/index.ts';
import { MemoryLogger, VirtualClock } from '../testing/index.ts';
import { createEventRecorder } from './backend-recorder.ts';
import { coreEventType, type EventsV1Event, eventsV1Type } from './event-types.ts';
import type { EventRecorderOptions } from './options.ts';

const T0 = Date.UTC(2024, 4, 6, 7, 8, 9);

const web: KubeObject = {
  apiVersion: 'example.com/v1',
  kind: 'Website',
  metadata: { name: 'web', namespace: 'shop', uid: 'uid-web', resourceVersion: '7' },
};
const deployment: KubeObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop', uid: 'uid-deploy', resourceVersion: '9' },
};

function setup(
  options: Partial<EventRecorderOptions> = {},
  types: ResourceType[] = [eventsV1Type, coreEventType],
) {
  const clock = new VirtualClock({ startMs: T0 });
  const store = new Store({ clock, types });
  const logger = new MemoryLogger();
  const recorder = createEventRecorder({
    backend: store,
    component: 'website-controller',
    instance: 'website-controller-a',
    clock,
    logger,
    ...options,
  });
  const events = async (): Promise<EventsV1Event[]> => [
    ...(await store.list<EventsV1Event>(eventsV1Type)).items,
  ];
  return { clock, store, logger, recorder, events };
}

describe('createEventRecorder on the store', () => {
  it('writes an events.k8s.io/v1 Event naming the controller, the instance and both objects', async () => {
    const { clock, recorder, events } = setup();
    recorder.event(web, 'Normal', 'Created', 'CreateDeployment', 'created deployment web', deployment);
    await clock.advance(0);
    const [event] = await events();
    expect(event).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { namespace: 'shop' },
      eventTime: '2024-05-06T07:08:09.000000Z',
      reportingController: 'website-controller',
      reportingInstance: 'website-controller-a',
      action: 'CreateDeployment',
      reason: 'Created',
      type: 'Normal',
      note: 'created deployment web',
      regarding: {
        apiVersion: 'example.com/v1',
        kind: 'Website',
        namespace: 'shop',
        name: 'web',
        uid: 'uid-web',
        resourceVersion: '7',
      },
      related: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'uid-deploy' },
    });
    expect(event?.series).toBeUndefined();
    expect(event?.metadata.name).toMatch(/^web\.[0-9a-f]+$/);
    expect(recorder.stats()).toMatchObject({ recorded: 1, sent: 1, aggregated: 0, api: 'events.k8s.io/v1' });
  });

  it('turns a burst of identical events into one Event whose series counts every occurrence', async () => {
    const { clock, recorder, events } = setup();
    for (let i = 0; i < 100; i++) recorder.event(web, 'Warning', 'BackOff', 'Reconcile', 'retrying');
    await clock.advance(0);
    const all = await events();
    expect(all).toHaveLength(1);
    expect(all[0]?.series).toEqual({ count: 100, lastObservedTime: '2024-05-06T07:08:09.000000Z' });
    expect(recorder.stats()).toMatchObject({ recorded: 100, aggregated: 99, sent: 1 });
    expect(recorder.stats().dropped.rateLimit).toBe(0);
  });

  it('writes repeats after the first write as a series update at most once per 30 s heartbeat', async () => {
    const { clock, recorder, events } = setup();
    recorder.event(web, 'Warning', 'BackOff', 'Reconcile', 'retrying');
    await clock.advance(0);
    for (let s = 1; s <= 10; s++) {
      await clock.advance(1000);
      recorder.event(web, 'Warning', 'BackOff', 'Reconcile', 'retrying');
    }
    await clock.advance(19_000);
    expect((await events())[0]?.series).toBeUndefined();
    await clock.advance(1000);
    expect((await events())[0]?.series).toEqual({
      count: 11,
      lastObservedTime: '2024-05-06T07:08:19.000000Z',
    });
    expect(recorder.stats().sent).toBe(2);

    recorder.event(web, 'Warning', 'BackOff', 'Reconcile', 'retrying');
    await clock.advance(29_999);
    expect((await events())[0]?.series?.count).toBe(11);
    await clock.advance(1);
    expect((await events())[0]?.series?.count).toBe(12);
    expect(await events()).toHaveLength(1);
  });

  it('writes nothing on a heartbeat when nothing happened since the last write', async () => {
    const { clock, recorder } = setup();
    recorder.event(web, 'Warning', 'BackOff', 'Reconcile', 'retrying');
    await clock.advance(0);
    await clock.advance(300_000);
    expect(recorder.stats().sent).toBe(1);
    expect(clock.pendingTimers).toBe(0);
  });

  it('keeps Events apart when reason, action, type, note or related object differ', async () => {
    const { clock, recorder, events } = setup();
    recorder.event(web, 'Normal', 'Created', 'Create', 'x');
    recorder.event(web, 'Normal', 'Updated', 'Create', 'x');
    recorder.event(web, 'Normal', 'Created', 'Update', 'x');
    recorder.event(web, 'Warning', 'Created', 'Create', 'x');
    recorder.event(web, 'Normal', 'Created', 'Create', 'y');
    recorder.event(web, 'Normal', 'Created', 'Create', 'x', deployment);
    recorder.event(web, 'Normal', 'Created', 'Create', 'x');
    await clock.advance(0);
    const all = await events();
    expect(all).toHaveLength(6);
    expect(new Set(all.map((e) => e.metadata.name)).size).toBe(6);
    expect(all.filter((e) => e.series?.count === 2)).toHaveLength(1);
  });

  it('folds repeats about a newer resourceVersion of the same object into the same series', async () => {
    const { clock, recorder, events } = setup();
    recorder.event(web, 'Normal', 'Synced', 'Reconcile', 'ok');
    recorder.event(
      { ...web, metadata: { ...web.metadata, resourceVersion: '8' } },
      'Normal',
      'Synced',
      'Reconcile',
      'ok',
    );
    await clock.advance(0);
    expect((await events()).map((e) => e.series?.count)).toEqual([2]);
  });

  it('starts a new Event when a repeat comes after the 6 minute series window', async () => {
    const { clock, recorder, events } = setup();
    recorder.event(web, 'Normal', 'Synced', 'Reconcile', 'ok');
    await clock.advance(359_999);
    recorder.event(web, 'Normal', 'Synced', 'Reconcile', 'ok');
    await clock.advance(30_000);
    expect(await events()).toHaveLength(1);
    await clock.advance(360_000);
    recorder.event(web, 'Normal', 'Synced', 'Reconcile', 'ok');
    await clock.advance(0);
    const all = await events();
    expect(all).toHaveLength(2);
    expect(all.map((e) => e.series?.count ?? 1).sort()).toEqual([1, 2]);
  });

  it('puts Events about cluster-scoped objects in the default namespace', async () => {
    const { clock, recorder, events } = setup();
    const node: KubeObject = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1', uid: 'n1' } };
    recorder.event(node, 'Warning', 'NotReady', 'Check', 'kubelet stopped posting status');
    await clock.advance(0);
    const [event] = await events();
    expect(event?.metadata.namespace).toBe('default');
    expect(event?.regarding).toEqual({ apiVersion: 'v1', kind: 'Node', name: 'node-1', uid: 'n1' });
  });

  it('cuts the note to 1 KiB of UTF-8 and reason and action to 128 characters', async () => {
    const { clock, recorder, events } = setup();
    recorder.event(web, 'Normal', 'R'.repeat(200), 'A'.repeat(200), 'é'.repeat(1000));
    await clock.advance(0);
    const [event] = await events();
    expect(new TextEncoder().encode(event?.note).length).toBe(1024);
    expect(event?.note).toBe('é'.repeat(512));
    expect(event?.reason).toHaveLength(128);
    expect(event?.action).toHaveLength(128);
  });

  it('keeps Event names within 253 characters for long object names', async () => {
    const { clock, recorder, events } = setup();
    const long: KubeObject = { kind: 'ConfigMap', metadata: { name: 'a'.repeat(253), namespace: 'shop' } };
    recorder.event(long, 'Normal', 'Seen', 'Watch', '');
    await clock.advance(0);
    const name = (await events())[0]?.metadata.name ?? '';
    expect(name.length).toBeLessThanOrEqual(253);
    expect(name.startsWith('aaaa')).toBe(true);
  });

  it('drops and counts new Events past the burst of 25 per object, and refills one every 5 minutes', async () => {
    const { clock, recorder, events } = setup();
    for (let i = 0; i < 30; i++) recorder.event(web, 'Normal', `Step${i}`, 'Reconcile', 'ok');
    recorder.event(deployment, 'Normal', 'Other', 'Reconcile', 'another object has its own bucket');
    await clock.advance(0);
    expect(await events()).toHaveLength(26);
    expect(recorder.stats()).toMatchObject({ recorded: 26, dropped: { rateLimit: 5 } });

    await clock.advance(299_000);
    recorder.event(web, 'Normal', 'Late', 'Reconcile', 'ok');
    expect(recorder.stats().dropped.rateLimit).toBe(6);
    await clock.advance(1000);
    recorder.event(web, 'Normal', 'Later', 'Reconcile', 'ok');
    await clock.advance(0);
    expect(recorder.stats().dropped.rateLimit).toBe(6);
    expect(await events()).toHaveLength(27);
  });

  it('does not spend rate-limit tokens on repeats folded into a series', async () => {
    const { clock, recorder } = setup({ burst: 1 });
    for (let i = 0; i < 50; i++) recorder.event(web, 'Normal', 'Synced', 'Reconcile', 'ok');
    recorder.event(web, 'Normal', 'Other', 'Reconcile', 'ok');
    await clock.advance(0);
    expect(recorder.stats()).toMatchObject({ recorded: 50, aggregated: 49, dropped: { rateLimit: 1 } });
  });

  it('drops the newest new Event when the buffer is full, and counts it', async () => {
    const { clock, recorder, events } = setup({ maxBuffer: 2 });
    recorder.event(web, 'Normal', 'A', 'Reconcile', 'ok');
    recorder.event(web, 'Normal', 'B', 'Reconcile', 'ok');
    recorder.event(web, 'Normal', 'C', 'Reconcile', 'ok');
    recorder.event(web, 'Normal', 'A', 'Reconcile', 'ok');
    expect(recorder.stats()).toMatchObject({
      buffered: 2,
      recorded: 3,
      aggregated: 1,
      dropped: { buffer: 1 },
    });
    await clock.advance(0);
    expect((await events()).map((e) => e.reason).sort()).toEqual(['A', 'B']);
  });

  it('writes the last count of a series evicted past maxSeries at once, or counts it lost when the buffer is full', async () => {
    const { clock, recorder, events } = setup({ maxSeries: 1 });
    recorder.event(web, 'Normal', 'A', 'Reconcile', 'ok');
    await clock.advance(0);
    recorder.event(web, 'Normal', 'A', 'Reconcile', 'ok');
    recorder.event(web, 'Normal', 'B', 'Reconcile', 'ok');
    await clock.advance(0);
    expect((await events()).map((e) => [e.reason, e.series?.count ?? 1]).sort()).toEqual([
      ['A', 2],
      ['B', 1],
    ]);

    const tight = setup({ maxSeries: 1, maxBuffer: 1 });
    tight.recorder.event(web, 'Normal', 'A', 'Reconcile', 'ok');
    await tight.clock.advance(0);
    tight.recorder.event(web, 'Normal', 'A', 'Reconcile', 'ok');
    tight.recorder.event(web, 'Normal', 'B', 'Reconcile', 'ok');
    expect(tight.recorder.stats()).toMatchObject({ buffered: 1, dropped: { evicted: 1, buffer: 0 } });
  });

  it('writes pending series updates at once on close, without waiting for the heartbeat', async () => {
    const { clock, recorder, events } = setup();
    recorder.event(web, 'Normal', 'Synced', 'Reconcile', 'ok');
    await clock.advance(0);
    recorder.event(web, 'Normal', 'Synced', 'Reconcile', 'ok');
    const closed = recorder.close();
    await clock.advance(0);
    await expect(closed).resolves.toEqual({ flushed: true, abandoned: 0 });
    expect((await events())[0]?.series?.count).toBe(2);
    recorder.event(web, 'Normal', 'Synced', 'Reconcile', 'ok');
    expect(recorder.stats().dropped.closed).toBe(1);
    expect(clock.pendingTimers).toBe(0);
  });

  it('closes itself when the signal given to start aborts, as a Manager runnable', async () => {
    const { clock, recorder } = setup();
    expect(recorder.needLeaderElection).toBe(false);
    const controller = new AbortController();
    let stopped = false;
    const running = recorder.start(controller.signal).then(() => {
      stopped = true;
    });
    recorder.event(web, 'Normal', 'Synced', 'Reconcile', 'ok');
    await clock.advance(0);
    expect(stopped).toBe(false);
    controller.abort();
    await clock.advance(0);
    await running;
    expect(stopped).toBe(true);
    recorder.event(web, 'Normal', 'Synced', 'Reconcile', 'ok');
    expect(recorder.stats()).toMatchObject({ sent: 1, dropped: { closed: 1 } });
  });
});
