import { describe, expect, it } from 'vitest';
import { type ResourceType, UnavailableError } from '../backend/index.ts';
import { SourceSyncError } from '../controller/index.ts';
import { AlreadyStartedError, OptionsError } from '../errors.ts';
import { done, requeueAfter } from '../reconcile/index.ts';
import { settle } from '../testing/index.ts';
import { ControllerShutDownError, KindStoppedError } from './errors.ts';
import { clusterKind, label, object, setup, widgetKind } from './test-support.ts';
import type { KindContext, KindRequest } from './types.ts';

interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('DynamicController', () => {
  it('G1 serve on a running controller resolves once the kind synced, every existing object enqueued', async () => {
    const { backend, stop, controller } = setup();
    const kind = widgetKind(1);
    for (const name of ['a', 'b', 'c']) backend.set(kind, object(kind, name));
    const run = controller.start(stop.signal);
    const seen: string[] = [];
    await controller.serve(kind, (request) => {
      seen.push(label(request));
      return done();
    });
    expect(controller.allSynced()).toBe(true);
    expect(controller.served().map((t) => t.plural)).toEqual(['widget1s']);
    await settle();
    expect(seen.sort()).toEqual(['widget1s:default/a', 'widget1s:default/b', 'widget1s:default/c']);
    backend.set(kind, object(kind, 'd'));
    await settle();
    expect(seen).toContain('widget1s:default/d');
    stop.abort();
    await run;
  });

  it('G2 serving a served kind again replaces its handler and enqueues every cached object again', async () => {
    const { backend, stop, controller } = setup();
    const kind = widgetKind(1);
    for (const name of ['a', 'b']) backend.set(kind, object(kind, name));
    const run = controller.start(stop.signal);
    const first: string[] = [];
    const second: string[] = [];
    await controller.serve(kind, (r) => void first.push(r.name));
    await settle();
    expect(first.sort()).toEqual(['a', 'b']);
    await controller.serve(kind, (r) => void second.push(r.name));
    await settle();
    expect(second.sort()).toEqual(['a', 'b']);
    expect(first).toHaveLength(2);
    // The type is replaced too (a CRD gained a status subresource): handlers see the new one.
    let seenType: ResourceType | undefined;
    await controller.serve({ ...kind, statusSubresource: true }, (_r, { type }) => {
      seenType = type;
    });
    await settle();
    expect(seenType?.statusSubresource).toBe(true);
    expect(controller.served()[0]?.statusSubresource).toBe(true);
    expect(controller.served()).toHaveLength(1);
    expect(backend.openWatches).toBe(1);
    stop.abort();
    await run;
  });

  it('G3 stopServing a kind that is not served resolves and changes nothing', async () => {
    const { stop, controller, backend } = setup();
    const run = controller.start(stop.signal);
    await controller.serve(widgetKind(1), () => done());
    await expect(controller.stopServing(widgetKind(2))).resolves.toBeUndefined();
    await expect(
      controller.stopServing({ group: 'x', version: 'v1', resource: 'ys' }),
    ).resolves.toBeUndefined();
    expect(controller.served()).toHaveLength(1);
    expect(backend.openWatches).toBe(1);
    stop.abort();
    await run;
  });

  it('G4 stopServing drops queued keys of that kind at once and aborts its in-flight reconciles, ignoring their result', async () => {
    const { backend, stop, controller, clock } = setup({ workers: 1 });
    const a = widgetKind('a');
    const b = widgetKind('b');
    for (let i = 0; i < 5; i++) backend.set(a, object(a, `a${i}`));
    backend.set(b, object(b, 'b0'));
    const run = controller.start(stop.signal);
    const gate = deferred();
    const calls: string[] = [];
    let signalReason: unknown;
    await controller.serve(a, async (request, { signal }: KindContext) => {
      calls.push(label(request));
      await gate.promise;
      signalReason = signal.reason;
      throw new Error('fails after its kind stopped');
    });
    await controller.serve(b, (request) => void calls.push(label(request)));
    await settle();
    // One worker: one `a` reconcile is in flight, four `a` keys and one `b` key are queued.
    expect(calls).toHaveLength(1);
    expect(controller.stats().depth).toBe(5);
    const stopping = controller.stopServing(a);
    expect(controller.stats().depth).toBe(1);
    let stopped = false;
    void stopping.then(() => {
      stopped = true;
    });
    await settle();
    expect(stopped).toBe(false);
    gate.resolve();
    await stopping;
    expect(signalReason).toBeInstanceOf(KindStoppedError);
    expect((signalReason as KindStoppedError).kind).toBe('example.com/v1/widgetas');
    await clock.advance(60_000);
    // The failed reconcile of the stopped kind was not retried; only `b` ran after it.
    expect(calls.filter((c) => c.startsWith('widgetas'))).toHaveLength(1);
    expect(calls).toContain('widgetbs:default/b0');
    expect(controller.stats().waiting).toBe(0);
    expect(backend.openWatches).toBe(1);
    stop.abort();
    await run;
  });

  it('G4 no reconcile of a kind starts after its stopServing resolved, even for events already delivered', async () => {
    const { backend, stop, controller, clock } = setup({ workers: 2 });
    const a = widgetKind('a');
    const run = controller.start(stop.signal);
    const calls: string[] = [];
    await controller.serve(a, (r) => void calls.push(r.name));
    await settle();
    backend.set(a, object(a, 'late'));
    controller.queue.add({
      kind: { group: 'example.com', version: 'v1', resource: 'widgetas' },
      namespace: 'default',
      name: 'x',
    });
    await controller.stopServing(a);
    await clock.advance(1_000);
    expect(calls).toEqual([]);
    stop.abort();
    await run;
  });

  it('G5 the same namespace/name in two kinds are two requests, reconciled independently', async () => {
    const { backend, stop, controller } = setup({ workers: 2 });
    const one = widgetKind(1);
    const two = widgetKind(2);
    backend.set(one, object(one, 'same'));
    backend.set(two, object(two, 'same'));
    const run = controller.start(stop.signal);
    const gate = deferred();
    const running: string[] = [];
    const handler = async (request: KindRequest): Promise<void> => {
      running.push(label(request));
      await gate.promise;
    };
    await controller.serve(one, handler);
    await controller.serve(two, handler);
    await settle();
    expect(running.sort()).toEqual(['widget1s:default/same', 'widget2s:default/same']);
    gate.resolve();
    stop.abort();
    await run;
  });

  it('G6 a request carries its kind and a split namespace and name; cluster-scoped objects have namespace ""', async () => {
    const { backend, stop, controller } = setup();
    const kind = widgetKind(1);
    backend.set(kind, object(kind, 'web', 'team-a'));
    backend.set(clusterKind, object(clusterKind, 'global'));
    const run = controller.start(stop.signal);
    const requests: KindRequest[] = [];
    const contexts: KindContext[] = [];
    const handler = (request: KindRequest, context: KindContext): void => {
      requests.push(request);
      contexts.push(context);
    };
    await controller.serve(kind, handler);
    await controller.serve(clusterKind, handler);
    await settle();
    expect(requests).toContainEqual({
      kind: { group: 'example.com', version: 'v1', resource: 'widget1s' },
      namespace: 'team-a',
      name: 'web',
    });
    expect(requests).toContainEqual({
      kind: { group: 'example.com', version: 'v1', resource: 'gadgets' },
      namespace: '',
      name: 'global',
    });
    const webContext = contexts[requests.findIndex((r) => r.name === 'web')];
    expect(webContext?.type.kind).toBe('Widget1');
    expect(webContext?.cache.get({ namespace: 'team-a', name: 'web' })?.metadata.name).toBe('web');
    stop.abort();
    await run;
  });

  it('G7 start twice fails, and serve after the controller stopped fails with a typed error', async () => {
    const { stop, controller } = setup();
    const run = controller.start(stop.signal);
    await expect(controller.start(stop.signal)).rejects.toBeInstanceOf(AlreadyStartedError);
    stop.abort();
    await run;
    expect(controller.state).toBe('stopped');
    await expect(controller.start(new AbortController().signal)).rejects.toBeInstanceOf(AlreadyStartedError);
    await expect(controller.serve(widgetKind(1), () => done())).rejects.toBeInstanceOf(
      ControllerShutDownError,
    );
  });

  it('kinds served before start are synced before the workers start, and reconciled after', async () => {
    const { backend, stop, controller } = setup();
    const kind = widgetKind(1);
    backend.set(kind, object(kind, 'a'));
    const calls: string[] = [];
    await controller.serve(kind, (r) => void calls.push(r.name));
    expect(backend.listCalls).toHaveLength(0);
    await settle();
    expect(calls).toEqual([]);
    const run = controller.start(stop.signal);
    await controller.waitForSync(stop.signal);
    await settle();
    expect(calls).toEqual(['a']);
    stop.abort();
    await run;
  });

  it('drops updates whose generation did not change by default, and lets them through when turned off', async () => {
    const { backend, stop, controller } = setup();
    const filtered = widgetKind('f');
    const unfiltered = widgetKind('u');
    backend.set(filtered, object(filtered, 'x', 'default', 1));
    backend.set(unfiltered, object(unfiltered, 'x', 'default', 1));
    const run = controller.start(stop.signal);
    const calls: string[] = [];
    await controller.serve(filtered, (r) => void calls.push(label(r)));
    await controller.serve(unfiltered, (r) => void calls.push(label(r)), {
      filterUnchangedGeneration: false,
    });
    await settle();
    calls.length = 0;
    // A status-only write: the generation stays 1.
    backend.set(filtered, { ...object(filtered, 'x', 'default', 1), status: { ready: true } } as never);
    backend.set(unfiltered, { ...object(unfiltered, 'x', 'default', 1), status: { ready: true } } as never);
    await settle();
    expect(calls).toEqual(['widgetus:default/x']);
    // A spec change bumps the generation: both reconcile.
    calls.length = 0;
    backend.set(filtered, object(filtered, 'x', 'default', 2));
    await settle();
    expect(calls).toEqual(['widgetfs:default/x']);
    stop.abort();
    await run;
  });

  it('never filters updates of kinds without generations', async () => {
    const { backend, stop, controller } = setup();
    const kind = widgetKind(1);
    backend.set(kind, object(kind, 'x', 'default', 0));
    const run = controller.start(stop.signal);
    const calls: string[] = [];
    await controller.serve(kind, (r) => void calls.push(r.name));
    await settle();
    backend.set(kind, { ...object(kind, 'x', 'default', 0), status: { n: 1 } } as never);
    await settle();
    expect(calls).toEqual(['x', 'x']);
    stop.abort();
    await run;
  });

  it("maxRetries counts as kro's QueueMaxRetries: a request that always fails runs 1 + maxRetries times", async () => {
    const { backend, stop, controller, clock } = setup({ maxRetries: 2 });
    const kind = widgetKind(1);
    backend.set(kind, object(kind, 'x'));
    const run = controller.start(stop.signal);
    let calls = 0;
    await controller.serve(kind, () => {
      calls++;
      throw new Error('always');
    });
    await clock.advance(600_000);
    expect(calls).toBe(3);
    stop.abort();
    await run;
  });

  it('a storm on one kind delays a fresh request of another kind by at most one worker slot', async () => {
    const workers = 3;
    const { backend, stop, controller, clock } = setup({ workers });
    const storm = widgetKind('storm');
    const quiet = widgetKind('quiet');
    for (let i = 0; i < 2_000; i++) backend.set(storm, object(storm, `s${i}`));
    const run = controller.start(stop.signal);
    const order: string[] = [];
    await controller.serve(storm, async (r, { signal }) => {
      order.push(label(r));
      await clock.sleep(10, signal);
    });
    await controller.serve(quiet, (r) => void order.push(label(r)));
    await clock.advance(50);
    const before = order.length;
    backend.set(quiet, object(quiet, 'fresh'));
    await settle();
    await clock.advance(10);
    const at = order.indexOf('widgetquiets:default/fresh');
    expect(at).toBeGreaterThanOrEqual(0);
    // Started after at most one storm request per worker that was free before it.
    expect(at - before).toBeLessThanOrEqual(workers);
    stop.abort();
    await run;
  });

  it('maxConcurrent gives a kind at most that many of the shared workers', async () => {
    const { backend, stop, controller, clock } = setup({ workers: 4 });
    const limited = widgetKind('l');
    const free = widgetKind('f');
    for (let i = 0; i < 10; i++) {
      backend.set(limited, object(limited, `l${i}`));
      backend.set(free, object(free, `f${i}`));
    }
    const run = controller.start(stop.signal);
    let active = 0;
    let peak = 0;
    let freeRan = 0;
    await controller.serve(
      limited,
      async (_r, { signal }) => {
        active++;
        peak = Math.max(peak, active);
        await clock.sleep(100, signal);
        active--;
      },
      { maxConcurrent: 1 },
    );
    await controller.serve(free, async (_r, { signal }) => {
      freeRan++;
      await clock.sleep(10, signal);
    });
    await clock.advance(2_000);
    expect(peak).toBe(1);
    expect(freeRan).toBe(10);
    stop.abort();
    await run;
  });

  it('serve rejects with a SourceSyncError and serves nothing when the kind does not sync in time', async () => {
    const { backend, stop, controller, clock } = setup({ syncTimeoutMs: 5_000 });
    const kind = widgetKind(1);
    backend.failNext('list', new UnavailableError('apiserver down'), 1_000);
    backend.failNext('watch', new UnavailableError('apiserver down'), 1_000);
    const run = controller.start(stop.signal);
    const serving = controller.serve(kind, () => done());
    const outcome = serving.then(
      () => undefined,
      (error: unknown) => error,
    );
    await clock.advance(6_000);
    const error = await outcome;
    expect(error).toBeInstanceOf(SourceSyncError);
    expect((error as SourceSyncError).source).toBe('example.com/v1/widget1s');
    expect(controller.served()).toEqual([]);
    await settle();
    expect(backend.openWatches).toBe(0);
    stop.abort();
    await run;
  });

  it('serve rejects with a KindStoppedError when the kind is stopped while it syncs', async () => {
    const { backend, stop, controller, clock } = setup();
    const kind = widgetKind(1);
    backend.failNext('list', new UnavailableError('apiserver down'), 1_000);
    backend.failNext('watch', new UnavailableError('apiserver down'), 1_000);
    const run = controller.start(stop.signal);
    const outcome = controller
      .serve(kind, () => done())
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    await clock.advance(1_000);
    await controller.stopServing(kind);
    expect(await outcome).toBeInstanceOf(KindStoppedError);
    expect(controller.served()).toEqual([]);
    await settle();
    expect(backend.openWatches).toBe(0);
    stop.abort();
    await run;
  });

  it('resyncPeriodMs reconciles every cached object again each period, and stops with the kind', async () => {
    const { backend, stop, controller, clock } = setup({ resyncPeriodMs: 60_000 });
    const kind = widgetKind(1);
    backend.set(kind, object(kind, 'a'));
    backend.set(kind, object(kind, 'b'));
    const run = controller.start(stop.signal);
    let calls = 0;
    await controller.serve(kind, () => {
      calls++;
      return done();
    });
    await settle();
    expect(calls).toBe(2);
    await clock.advance(60_000);
    expect(calls).toBe(4);
    await controller.stopServing(kind);
    await clock.advance(120_000);
    expect(calls).toBe(4);
    stop.abort();
    await run;
  });

  it('a requeueAfter of a stopped kind never fires a reconcile', async () => {
    const { backend, stop, controller, clock } = setup();
    const kind = widgetKind(1);
    backend.set(kind, object(kind, 'a'));
    const run = controller.start(stop.signal);
    let calls = 0;
    await controller.serve(kind, () => {
      calls++;
      return requeueAfter(1_000);
    });
    await settle();
    expect(calls).toBe(1);
    expect(controller.stats().waiting).toBe(1);
    await controller.stopServing(kind);
    expect(controller.stats().waiting).toBe(0);
    await clock.advance(10_000);
    expect(calls).toBe(1);
    stop.abort();
    await run;
  });

  it('stopping the controller aborts in-flight reconciles and releases every informer', async () => {
    const { backend, stop, controller, clock } = setup({ workers: 2 });
    const kind = widgetKind(1);
    backend.set(kind, object(kind, 'a'));
    const run = controller.start(stop.signal);
    let aborted = false;
    await controller.serve(kind, async (_request, { signal }) => {
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      aborted = true;
    });
    await controller.serve(widgetKind(2), () => done());
    await settle();
    stop.abort();
    await run;
    expect(aborted).toBe(true);
    expect(controller.served()).toEqual([]);
    expect(backend.openWatches).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it('rejects bad options, kinds and handlers with OptionsErrors', async () => {
    const { controller, backend } = setup();
    expect(() => setup({ workers: 0 })).toThrow(OptionsError);
    expect(() =>
      setup({ maxRetries: 2, retryPolicy: { name: 'x', decide: () => ({ retry: false }) } }),
    ).toThrow(OptionsError);
    expect(() => setup({ backend: {} as never })).toThrow(OptionsError);
    await expect(controller.serve({ ...widgetKind(1), plural: '' }, () => done())).rejects.toBeInstanceOf(
      OptionsError,
    );
    await expect(controller.serve(widgetKind(1), 42 as never)).rejects.toBeInstanceOf(OptionsError);
    await expect(controller.serve(widgetKind(1), () => done(), { maxConcurrent: 0 })).rejects.toBeInstanceOf(
      OptionsError,
    );
    await expect(controller.stopServing(null as never)).rejects.toBeInstanceOf(OptionsError);
    expect(controller.served()).toEqual([]);
    expect(backend.openWatches).toBe(0);
  });

  it('a reconcile learns why it ran: the event of its kind, or a resync when the kind is served again', async () => {
    const { backend, stop, controller } = setup();
    const kind = widgetKind(1);
    backend.set(kind, object(kind, 'a', 'default', 1));
    const run = controller.start(stop.signal);
    const seen: string[][] = [];
    const handler = (_r: KindRequest, { causes }: KindContext): void => {
      seen.push(causes.map((c) => `${c.type}:${c.source ?? ''}:${c.object?.name ?? ''}`));
    };
    await controller.serve(kind, handler);
    await settle();
    backend.set(kind, object(kind, 'a', 'default', 2));
    await settle();
    await controller.serve(kind, handler);
    await settle();
    expect(seen).toEqual([
      ['added:example.com/v1/widget1s:a'],
      ['modified:example.com/v1/widget1s:a'],
      ['resync:example.com/v1/widget1s:a'],
    ]);
    stop.abort();
    await run;
  });

  it('the reconcile metric hook carries the kind', async () => {
    const results: [string, string | undefined][] = [];
    const { backend, stop, controller } = setup({
      metrics: { onReconcile: (_c, result, _d, kind) => void results.push([result, kind]) },
    });
    const kind = widgetKind(1);
    backend.set(kind, object(kind, 'a'));
    const run = controller.start(stop.signal);
    await controller.serve(kind, () => done());
    await settle();
    expect(results).toEqual([['success', 'example.com/v1/widget1s']]);
    stop.abort();
    await run;
  });
});
