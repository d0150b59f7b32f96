import { describe, expect, it } from 'vitest';
import { ShutdownTimeoutError, SourceFailedError } from '../controller/index.ts';
import { AlreadyStartedError } from '../errors.ts';
import type { EventSource } from '../event/index.ts';
import { EventChannel } from '../source/index.ts';
import { linearRetryPolicy, setup, type Widget, widget } from './informer-controller-test-support.ts';
import { opinionatedRetryDequeuePolicy } from './retry-dequeue-policy.ts';
import type { ResourceAction } from './types.ts';

/** An event channel that can be run, recording its runs. */
class RunnableChannel extends EventChannel<Widget> implements EventSource<Widget> {
  readonly runs: { signal: AbortSignal }[] = [];
  failWith: Error | undefined;

  start(signal: AbortSignal): Promise<void> {
    this.runs.push({ signal });
    if (this.failWith !== undefined) return Promise.reject(this.failWith);
    return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  }
}

describe('InformerController lifecycle (statement 13, adapted to start(signal))', () => {
  it('statement 13 (adapted): start runs every informer it was given once, also those added later, but not those started elsewhere', async () => {
    const { controller, clock, stop, start } = setup();
    const before = new RunnableChannel();
    const shared = new RunnableChannel();
    const registryRun = new RunnableChannel();
    controller.addInformer(before, 'Widget');
    controller.addInformer(before, 'Gadget');
    controller.addInformer(registryRun, 'Widget', { start: false });
    const run = start();
    await clock.advance(0);
    expect(before.runs).toHaveLength(1);
    expect(registryRun.runs).toHaveLength(0);
    controller.addInformer(shared, 'Widget');
    expect(shared.runs).toHaveLength(1);
    expect(controller.removeInformer(shared, 'Widget')).toBe(true);
    expect(shared.runs[0]?.signal.aborted).toBe(true);
    expect(controller.removeInformer(before, 'Widget')).toBe(true);
    expect(before.runs[0]?.signal.aborted).toBe(false);
    stop.abort();
    await run;
    expect(before.runs[0]?.signal.aborted).toBe(true);
    expect(controller.state).toBe('stopped');
  });

  it('statement 13 (adapted): startInformers false leaves every informer to a registry', async () => {
    const { controller, clock, stop } = setup({ startInformers: false });
    const informer = new RunnableChannel();
    controller.addInformer(informer, 'Widget');
    const run = controller.start(stop.signal);
    await clock.advance(0);
    expect(informer.runs).toHaveLength(0);
    stop.abort();
    await run;
  });

  it('statement 13 (adapted): stopping discards pending retries and queued events and ignores new events', async () => {
    const { controller, events, clock, stop, start } = setup({ retryPolicy: linearRetryPolicy(1_000) });
    const calls: string[] = [];
    controller.addWatcher<Widget>(
      {
        async add(object, { signal }) {
          calls.push(`add:${object.spec.tag}@${clock.now()}`);
          if (object.spec.tag === 'slow') await clock.sleep(500, signal).catch(() => undefined);
          throw new Error('fails');
        },
      },
      'Widget',
    );
    const run = start();
    events.create(widget('w'));
    events.create(widget('slow'));
    events.create(widget('slow', { tag: 'queued' }));
    await clock.advance(100);
    expect(controller.stats()).toMatchObject({ pendingRetries: 1, running: 1, queued: 1 });
    stop.abort();
    await run;
    events.create(widget('late'));
    await clock.advance(60_000);
    expect(calls).toEqual(['add:w@0', 'add:slow@0']);
    expect(controller.stats()).toMatchObject({ pendingRetries: 0, running: 0, queued: 0, objects: 0 });
    expect(clock.pendingTimers).toBe(0);
  });

  it('starting twice is an AlreadyStartedError', async () => {
    const { controller, stop, start } = setup();
    const run = start();
    await expect(controller.start(stop.signal)).rejects.toBeInstanceOf(AlreadyStartedError);
    stop.abort();
    await run;
  });

  it('running handlers see their signal abort on stop, and stopping waits for them', async () => {
    const { controller, events, clock, stop, start } = setup();
    let finished = false;
    controller.addWatcher<Widget>(
      {
        async add(_object, { signal }) {
          await new Promise<void>((resolve) =>
            signal.addEventListener('abort', () => resolve(), { once: true }),
          );
          await clock.sleep(1_000);
          finished = true;
        },
      },
      'Widget',
    );
    const run = start();
    events.create(widget('w'));
    await clock.advance(0);
    stop.abort();
    let settled = false;
    void run.then(() => {
      settled = true;
    });
    await clock.advance(999);
    expect(settled).toBe(false);
    await clock.advance(1);
    await run;
    expect(finished).toBe(true);
  });

  it('a handler still running after shutdownTimeoutMs makes start reject with a ShutdownTimeoutError naming it', async () => {
    const { controller, events, clock, stop, start } = setup({ shutdownTimeoutMs: 5_000 });
    controller.addWatcher({ add: () => new Promise<void>(() => undefined) }, 'Widget', { name: 'stuck' });
    const run = start();
    const outcome = run.then(
      () => undefined,
      (error: unknown) => error,
    );
    events.create(widget('w'));
    await clock.advance(0);
    stop.abort();
    await clock.advance(5_000);
    const error = await outcome;
    expect(error).toBeInstanceOf(ShutdownTimeoutError);
    expect((error as ShutdownTimeoutError).running).toEqual(['Widget default/w stuck create #0']);
  });

  it('an informer whose start rejects stops the controller with a SourceFailedError', async () => {
    const { controller, clock, start } = setup();
    const broken = new RunnableChannel();
    broken.failWith = new Error('cannot list');
    controller.addInformer(broken, 'Widget');
    const outcome = start().then(
      () => undefined,
      (error: unknown) => error,
    );
    await clock.advance(0);
    const error = await outcome;
    expect(error).toBeInstanceOf(SourceFailedError);
    expect((error as SourceFailedError).cause).toBe(broken.failWith);
  });
});

describe('InformerController events, order and concurrency', () => {
  it('maps events to actions: create, update, a same-resourceVersion update as resync (update for watchers), delete with tombstones unwrapped', async () => {
    const { controller, events, clock, start } = setup();
    const watcherCalls: string[] = [];
    const actions: ResourceAction[] = [];
    controller.addWatcher<Widget>(
      {
        add: (o) => void watcherCalls.push(`add:${o.spec.tag}`),
        update: (old, o) => void watcherCalls.push(`update:${old.spec.tag}->${o.spec.tag}`),
        delete: (o) => void watcherCalls.push(`delete:${o.spec.tag}`),
      },
      'Widget',
    );
    controller.addReconciler<Widget, unknown>(
      { reconcile: ({ action }) => void actions.push(action) },
      'Widget',
    );
    void start();
    events.create(widget('w', { rv: '1', tag: 'v1' }), { isInInitialList: true });
    events.update(widget('w', { rv: '1', tag: 'v1' }), widget('w', { rv: '2', tag: 'v2' }));
    events.update(widget('w', { rv: '2', tag: 'v2' }), widget('w', { rv: '2', tag: 'v2' }));
    events.update(widget('w', { tag: 'v2' }), widget('w', { tag: 'v2' }), { isResync: true });
    events.delete(widget('w', { rv: '2', tag: 'last-known' }), { finalStateUnknown: true });
    events.generic(widget('w'));
    await clock.advance(0);
    expect(watcherCalls).toEqual([
      'add:v1',
      'update:v1->v2',
      'update:v2->v2',
      'update:v2->v2',
      'delete:last-known',
    ]);
    expect(actions).toEqual(['create', 'update', 'resync', 'resync', 'delete']);
    expect(controller.stats().events).toBe(5);
  });

  it('handles the events of one object in order, one handler call at a time, while the next event waits', async () => {
    const { controller, events, clock, start } = setup();
    const log: string[] = [];
    let running = 0;
    const handle = async (label: string): Promise<void> => {
      running++;
      log.push(`start ${label}@${clock.now()} (${running} running)`);
      await clock.sleep(100);
      running--;
    };
    controller.addWatcher<Widget>(
      { add: (o) => handle(`a add ${o.spec.tag}`), update: (_, o) => handle(`a update ${o.spec.tag}`) },
      'Widget',
    );
    controller.addWatcher<Widget>({ add: (o) => handle(`b add ${o.spec.tag}`) }, 'Widget');
    void start();
    events.create(widget('w', { tag: '1' }));
    events.update(widget('w', { rv: '1' }), widget('w', { rv: '2', tag: '2' }));
    await clock.advance(1_000);
    expect(log).toEqual([
      'start a add 1@0 (1 running)',
      'start b add 1@100 (1 running)',
      'start a update 2@200 (1 running)',
    ]);
  });

  it('a retry never races a fresh event of its object: a retry due while the object is busy waits for its turn', async () => {
    const { controller, events, clock, start } = setup({
      retryPolicy: linearRetryPolicy(1_000, 1),
      retryDequeuePolicy: opinionatedRetryDequeuePolicy,
    });
    const log: string[] = [];
    let running = 0;
    controller.addWatcher<Widget>(
      {
        add() {
          log.push(`add@${clock.now()} (${running} running)`);
          throw new Error('add fails');
        },
        async update() {
          running++;
          log.push(`update@${clock.now()}`);
          await clock.sleep(2_000);
          running--;
        },
      },
      'Widget',
    );
    void start();
    events.create(widget('w'));
    await clock.advance(500);
    events.update(widget('w', { rv: '1' }), widget('w', { rv: '2' }));
    await clock.advance(10_000);
    expect(log).toEqual(['add@0 (0 running)', 'update@500', 'add@2500 (0 running)']);
  });

  it('a slow object holds one worker only: with 2 workers, other objects are all handled while it runs', async () => {
    const { controller, events, clock, start } = setup({ workers: 2 });
    const handled: string[] = [];
    let running = 0;
    let most = 0;
    controller.addWatcher<Widget>(
      {
        async add(object) {
          running++;
          most = Math.max(most, running);
          if (object.metadata.name === 'slow') await clock.sleep(60_000);
          else await clock.sleep(10);
          handled.push(`${object.spec.tag}@${clock.now()}`);
          running--;
        },
      },
      'Widget',
    );
    void start();
    for (let i = 0; i < 3; i++) events.create(widget('slow', { tag: `slow${i}` }));
    for (const name of ['b', 'c', 'd', 'e', 'f']) events.create(widget(name));
    await clock.advance(100);
    expect(handled).toEqual(['b@10', 'c@20', 'd@30', 'e@40', 'f@50']);
    expect(controller.stats()).toMatchObject({ running: 1, queued: 2, objects: 1 });
    await clock.advance(180_000);
    expect(handled.slice(5)).toEqual(['slow0@60000', 'slow1@120000', 'slow2@180000']);
    expect(most).toBe(2);
  });
});
