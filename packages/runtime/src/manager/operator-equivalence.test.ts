/**
 * The Manager as grafana app-sdk's `Operator` (seed-semantics §2.4): it runs several controllers —
 * reconcile-by-key `Controller`s, `DynamicController`s and event-style `InformerController`s — and
 * stops all of them on the first error, which `start` rejects with (as the cause of a
 * `RunnableFailedError`). Where the Manager differs from the Operator (runnables added after start
 * are started; stopping waits for the controllers), the test says so in its title;
 * docs/coming-from/grafana-app-sdk.md says it to users.
 */
import { describe, expect, it } from 'vitest';
import { type ResourceType, resourceType } from '../backend/index.ts';
import { SourceFailedError } from '../controller/index.ts';
import { configMapType } from '../kinds/index.ts';
import { MemoryLogger } from '../log/index.ts';
import type { KubeObject, ObjectKey } from '../object/index.ts';
import { done } from '../reconcile/index.ts';
import type { Source } from '../source/index.ts';
import { FakeBackend, settle, VirtualClock } from '../testing/index.ts';
import { InformerController } from '../watcher/index.ts';
import { RunnableFailedError } from './errors.ts';
import { Manager } from './manager.ts';

const widgetType: ResourceType = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
});

function object(type: ResourceType, name: string): KubeObject {
  return {
    apiVersion: type.group === '' ? type.version : `${type.group}/${type.version}`,
    kind: type.kind,
    metadata: { name, namespace: 'default', generation: 1 },
  };
}

/** A source that syncs at once and fails (its `start` rejects) when told to. */
function breakableSource(name: string): { source: Source<ObjectKey>; fail: (error: Error) => void } {
  let fail: (error: Error) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    fail = reject;
  });
  failed.catch(() => {});
  return {
    fail: (error) => fail(error),
    source: {
      name,
      start: (signal) =>
        Promise.race([
          failed,
          new Promise<void>((resolve) => {
            if (signal.aborted) resolve();
            else signal.addEventListener('abort', () => resolve(), { once: true });
          }),
        ]),
    },
  };
}

/**
 * An informer controller in `manager` whose watcher records the Widgets it is told were added; the
 * informer comes from the manager's shared informers (which run it).
 */
function informerController(manager: Manager, seen: string[]): InformerController {
  const controller = new InformerController({ name: 'widget-watchers', clock: manager.clock });
  const { informer } = manager.informers.acquire({ backend: manager.backend, type: widgetType });
  controller.addInformer(informer, 'Widget', { start: false });
  controller.addWatcher(
    {
      add: (widget) => {
        seen.push(`watcher ${widget.metadata.name}`);
      },
    },
    'Widget',
  );
  manager.add(controller, { name: 'informer-controller' });
  return controller;
}

/** A manager over a fake backend holding one ConfigMap `a` and one Widget `w`. */
function setup() {
  const clock = new VirtualClock();
  const backend = new FakeBackend({ clock });
  backend.set(configMapType, object(configMapType, 'a'));
  backend.set(widgetType, object(widgetType, 'w'));
  const logger = new MemoryLogger();
  const manager = new Manager({ clock, backend, logger });
  return { clock, backend, logger, manager };
}

describe('the Manager as app-sdk’s Operator (seed-semantics §2.4)', () => {
  it('controllers added before start all run: a Controller, a DynamicController and an InformerController each handle their objects', async () => {
    const { backend, manager } = setup();
    const seen: string[] = [];
    const controller = manager
      .controller(configMapType)
      .named('configmaps')
      .complete((key) => {
        seen.push(`controller ${key.name}`);
        return done();
      });
    const dynamic = manager.dynamicController({ name: 'widgets' });
    await dynamic.serve(widgetType, (request) => {
      seen.push(`dynamic ${request.name}`);
      return done();
    });
    const watchers = informerController(manager, seen);
    const stop = new AbortController();
    const run = manager.start(stop.signal);
    await settle();
    expect(seen.sort()).toEqual(['controller a', 'dynamic w', 'watcher w']);
    expect([controller.state, dynamic.state, watchers.state]).toEqual(['running', 'running', 'running']);
    stop.abort();
    await run;
    expect(backend.openWatches).toBe(0);
  });

  it('the first controller error stops the others and is what start rejects with (as its cause)', async () => {
    const { backend, manager } = setup();
    const first = breakableSource('first');
    const second = breakableSource('second');
    const failing = manager
      .controller(configMapType)
      .named('failing')
      .watchesSource(first.source)
      .complete(() => done());
    const alsoFailing = manager
      .controller(widgetType)
      .named('also-failing')
      .watchesSource(second.source)
      .complete(() => done());
    const dynamic = manager.dynamicController({ name: 'widgets' });
    await dynamic.serve(widgetType, () => done());
    const watchers = informerController(manager, []);
    const run = manager.start(new AbortController().signal).catch((error: unknown) => error);
    await settle();
    expect([failing.state, alsoFailing.state, dynamic.state, watchers.state]).toEqual([
      'running',
      'running',
      'running',
      'running',
    ]);

    // Two controllers fail back to back: the first error is the one returned.
    const boom = new Error('boom');
    first.fail(boom);
    second.fail(new Error('later'));
    const error = await run;

    expect(error).toBeInstanceOf(RunnableFailedError);
    expect((error as RunnableFailedError).runnable).toBe('controller:failing');
    const cause = (error as RunnableFailedError).cause;
    expect(cause).toBeInstanceOf(SourceFailedError);
    expect((cause as SourceFailedError).cause).toBe(boom);
    // Every other controller saw stop and has returned; nothing watches any more.
    expect([failing.state, alsoFailing.state, dynamic.state, watchers.state]).toEqual([
      'stopped',
      'stopped',
      'stopped',
      'stopped',
    ]);
    expect(manager.state).toBe('stopped');
    expect(backend.openWatches).toBe(0);
  });

  it('an InformerController whose informer fails is a failed controller too: the others stop and start rejects with its error', async () => {
    const { backend, manager } = setup();
    const controller = manager
      .controller(configMapType)
      .named('configmaps')
      .complete(() => done());
    let fail: (error: Error) => void = () => {};
    const broken = new InformerController({ name: 'broken', clock: manager.clock });
    broken.addInformer(
      {
        subscribe: () => () => {},
        start: () =>
          new Promise<void>((_, reject) => {
            fail = reject;
          }),
      },
      'Widget',
    );
    broken.addWatcher({}, 'Widget');
    manager.add(broken, { name: 'informer-controller:broken' });
    const run = manager.start(new AbortController().signal).catch((error: unknown) => error);
    await settle();
    expect([controller.state, broken.state]).toEqual(['running', 'running']);

    const lost = new Error('watch lost for good');
    fail(lost);
    const error = (await run) as RunnableFailedError;

    expect(error).toBeInstanceOf(RunnableFailedError);
    expect(error.runnable).toBe('informer-controller:broken');
    expect(error.cause).toBeInstanceOf(SourceFailedError);
    expect((error.cause as SourceFailedError).cause).toBe(lost);
    expect([controller.state, broken.state]).toEqual(['stopped', 'stopped']);
    expect(backend.openWatches).toBe(0);
  });

  it('stopping the manager stops all controllers, waits for them, and start resolves without error; no handler runs afterwards', async () => {
    const { backend, manager } = setup();
    const seen: string[] = [];
    const controller = manager
      .controller(configMapType)
      .named('configmaps')
      .complete((key) => {
        seen.push(`controller ${key.name}`);
        return done();
      });
    const dynamic = manager.dynamicController({ name: 'widgets' });
    await dynamic.serve(widgetType, (request) => {
      seen.push(`dynamic ${request.name}`);
      return done();
    });
    const watchers = informerController(manager, seen);
    const stop = new AbortController();
    const run = manager.start(stop.signal);
    await settle();
    expect(seen).toHaveLength(3);

    stop.abort();
    await expect(run).resolves.toBeUndefined();
    // Unlike app-sdk's Operator, start returned only after every controller returned.
    expect([controller.state, dynamic.state, watchers.state]).toEqual(['stopped', 'stopped', 'stopped']);
    expect(backend.openWatches).toBe(0);
    await backend.create(configMapType, object(configMapType, 'b'));
    await backend.create(widgetType, object(widgetType, 'x'));
    await settle();
    expect(seen).toHaveLength(3);
  });

  it('manager.stop() stops all controllers like aborting the start signal', async () => {
    const { backend, manager } = setup();
    const controller = manager
      .controller(configMapType)
      .named('configmaps')
      .complete(() => done());
    const dynamic = manager.dynamicController({ name: 'widgets' });
    const watchers = informerController(manager, []);
    const run = manager.start(new AbortController().signal);
    await settle();
    manager.stop();
    await expect(run).resolves.toBeUndefined();
    expect([controller.state, dynamic.state, watchers.state]).toEqual(['stopped', 'stopped', 'stopped']);
    expect(backend.openWatches).toBe(0);
  });

  it('a controller that returns early without error is ignored: the others keep running, it is logged, start resolves on stop', async () => {
    const { backend, logger, manager } = setup();
    const seen: string[] = [];
    manager
      .controller(configMapType)
      .named('configmaps')
      .complete((key) => {
        seen.push(key.name);
        return done();
      });
    // An app-sdk controller's Run(stopCh) that returns nil at once.
    manager.add(async () => {}, { name: 'returns-early' });
    const stop = new AbortController();
    const run = manager.start(stop.signal);
    await settle();
    expect(manager.state).toBe('running');
    expect(logger.records).toContainEqual(
      expect.objectContaining({
        level: 'info',
        message: 'Runnable returned before stop',
        fields: expect.objectContaining({ runnable: 'returns-early' }),
      }),
    );
    // The others still run: a new object is reconciled.
    await backend.create(configMapType, object(configMapType, 'b'));
    await settle();
    expect(seen).toEqual(['a', 'b']);
    stop.abort();
    await expect(run).resolves.toBeUndefined();
  });

  it('runnables added after start: the manager starts them at once (app-sdk’s Operator does not); added after stop they are ignored', async () => {
    const { logger, manager } = setup();
    const stop = new AbortController();
    const run = manager.start(stop.signal);
    await settle();
    const seen: string[] = [];
    const late = manager
      .controller(configMapType)
      .named('late')
      .complete((key) => {
        seen.push(key.name);
        return done();
      });
    const lateWatchers = informerController(manager, seen);
    await settle();
    expect([late.state, lateWatchers.state]).toEqual(['running', 'running']);
    expect(seen.sort()).toEqual(['a', 'watcher w']);
    stop.abort();
    await run;
    expect([late.state, lateWatchers.state]).toEqual(['stopped', 'stopped']);

    let started = false;
    manager.add(
      async () => {
        started = true;
      },
      { name: 'after-stop' },
    );
    await settle();
    expect(started).toBe(false);
    expect(logger.records).toContainEqual(
      expect.objectContaining({
        message: 'Runnable added after stop; ignored',
        fields: expect.objectContaining({ runnable: 'after-stop' }),
      }),
    );
  });
});
