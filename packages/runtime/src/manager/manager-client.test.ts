import { describe, expect, it } from 'vitest';
import { ForbiddenError, NotFoundError, UnavailableError } from '../backend/index.ts';
import { KindNotServedError } from '../cache/index.ts';
import { ignoreNotFound } from '../client/index.ts';
import { Controller } from '../controller/index.ts';
import { object, widgetKind } from '../dynamic/test-support.ts';
import { AbortedError } from '../errors.ts';
import { FakeBackend, MemoryLogger, settle, VirtualClock } from '../testing/index.ts';
import { Manager } from './manager.ts';

const widgets = widgetKind(1);
const key = { namespace: 'default', name: 'a' };
const denied = (): ForbiddenError =>
  new ForbiddenError(
    'widget1s.example.com is forbidden: User "system:serviceaccount:ops:op" cannot list resource "widget1s" in API group "example.com" at the cluster scope',
  );

/** A manager over a FakeBackend whose lists and watches fail with `refuse()` while it is set. */
async function setup(
  refuse: (() => Error) | undefined,
  onInformerError?: (error: unknown, info: unknown) => void,
) {
  const clock = new VirtualClock();
  const backend = new FakeBackend({ clock });
  backend.set(widgets, object(widgets, 'a'));
  const state = { refuse };
  backend.beforeList = () => {
    if (state.refuse) throw state.refuse();
  };
  backend.beforeWatch = () => {
    if (state.refuse) throw state.refuse();
  };
  const logger = new MemoryLogger();
  const manager = new Manager({ clock, backend, logger, ...(onInformerError ? { onInformerError } : {}) });
  const stop = new AbortController();
  const run = manager.start(stop.signal);
  await settle();
  return {
    clock,
    backend,
    logger,
    manager,
    state,
    async stop() {
      stop.abort();
      await run;
    },
  };
}

describe('Manager client reads whose informer cannot list', () => {
  it('a cached read of a kind RBAC does not let it list fails at once with a ForbiddenError naming the missing permission, and succeeds once granted', async () => {
    const h = await setup(denied);
    const read = h.manager.client.get(widgets, key);
    const failure = await read.then(
      () => undefined,
      (error: unknown) => error,
    );
    // No virtual time passed: the first refused list failed the read, not a timeout.
    expect(h.clock.now()).toBe(0);
    expect(failure).toBeInstanceOf(ForbiddenError);
    const error = failure as ForbiddenError;
    expect(error.message).toContain('cannot read Widget1 through the cache');
    expect(error.message).toContain('Grant list and watch on widget1s.example.com cluster-wide');
    expect(error.message).toContain('cannot list resource "widget1s" in API group "example.com"');
    expect(error.details).toMatchObject({ group: 'example.com', kind: 'widget1s' });
    expect(error.cause).toBeInstanceOf(ForbiddenError);
    // A second read while the informer backs off fails at once too.
    await expect(h.manager.client.list(widgets)).rejects.toBeInstanceOf(ForbiddenError);
    // The informer kept retrying: once the permission is there, its next list syncs it and reads answer.
    h.state.refuse = undefined;
    await h.clock.advance(60_000);
    expect(h.manager.informers.size).toBe(1);
    expect((await h.manager.client.get(widgets, key)).metadata.name).toBe('a');
    await h.stop();
  });

  it('a cached read of a kind the server does not serve fails at once with KindNotServedError (not a NotFoundError ignoreNotFound would swallow), and the informer warns naming the CRD', async () => {
    const h = await setup(() => new NotFoundError('the server could not find the requested resource'));
    const failure = await h.manager.client.get(widgets, key).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(KindNotServedError);
    expect(failure).not.toBeInstanceOf(NotFoundError);
    expect((failure as Error).message).toBe(
      'cannot read Widget1 (example.com/v1) through the cache: the server does not serve widget1s.example.com in example.com/v1 (its list answered 404); install its CustomResourceDefinition, or check the group and version',
    );
    await expect(h.manager.client.get(widgets, key).catch(ignoreNotFound)).rejects.toBeInstanceOf(
      KindNotServedError,
    );
    const warning = h.logger.records.find((r) => r.level === 'warn' && /does not serve/.test(r.message));
    expect(warning?.message).toBe(
      'List failed: the server does not serve Widget1 (example.com/v1); is its CustomResourceDefinition installed? Retrying after a backoff',
    );
    expect(warning?.fields).toMatchObject({ kind: 'Widget1', group: 'example.com', version: 'v1' });
    await h.stop();
  });

  it('a read whose list fails for a reason that can pass (503) waits for the sync, bounded by its signal', async () => {
    const h = await setup(() => new UnavailableError('etcd is down'));
    const abort = new AbortController();
    let settled: unknown = 'pending';
    const read = h.manager.client.get(widgets, key, { signal: abort.signal }).then(
      (o) => (settled = o),
      (error: unknown) => (settled = error),
    );
    await h.clock.advance(5_000);
    expect(settled).toBe('pending');
    abort.abort();
    await read;
    expect(settled).toBeInstanceOf(AbortedError);
    h.state.refuse = undefined;
    const later = h.manager.client.get(widgets, key);
    await h.clock.advance(60_000);
    expect((await later).metadata.name).toBe('a');
    await h.stop();
  });

  it('a delete with delete but no list or watch permission deletes at once, starting no informer', async () => {
    const h = await setup(denied);
    const result = await h.manager.client.delete(widgets, key, { signal: AbortSignal.timeout(2_000) });
    expect(result.status).toBe('deleted');
    expect(h.clock.now()).toBe(0);
    expect(h.manager.informers.size).toBe(0);
    expect(h.backend.listCalls).toHaveLength(0);
    expect(h.backend.watchCalls).toHaveLength(0);
    await expect(h.backend.get(widgets, key)).rejects.toBeInstanceOf(NotFoundError);
    await h.stop();
  });

  it('a delete after cached reads hides the deleted incarnation from reads until the watch catches up, and shows a recreated one', async () => {
    const h = await setup(undefined);
    expect((await h.manager.client.get(widgets, key)).metadata.name).toBe('a');
    const uid = (await h.manager.client.get(widgets, key)).metadata.uid;
    await h.manager.client.delete(widgets, key);
    // The watch has not delivered the DELETED yet (no settle): the read hides the object anyway.
    await expect(h.manager.client.get(widgets, key)).rejects.toBeInstanceOf(NotFoundError);
    await settle();
    await expect(h.manager.client.get(widgets, key)).rejects.toBeInstanceOf(NotFoundError);
    await h.manager.client.create(widgets, object(widgets, 'a'));
    const again = await h.manager.client.get(widgets, key);
    expect(again.metadata.uid).not.toBe(uid);
    await h.stop();
  });
});

describe('Manager onInformerError', () => {
  it("hears every list its shared informers retry (app-sdk's informer ErrorHandler), and a non-function is an OptionsError", async () => {
    const heard: unknown[] = [];
    const h = await setup(denied, (error, info) => heard.push([(error as Error).name, info]));
    await h.manager.client.get(widgets, key).catch(() => undefined);
    expect(heard[0]).toEqual([
      'ForbiddenError',
      { informer: 'widget1s', during: 'list', next: 'list', retryInMs: expect.any(Number) },
    ]);
    h.state.refuse = undefined;
    await h.clock.advance(60_000);
    const failures = heard.length;
    expect((await h.manager.client.get(widgets, key)).metadata.name).toBe('a');
    expect(heard).toHaveLength(failures);
    await h.stop();
    expect(() => new Manager({ onInformerError: 'log' as never })).toThrow(/onInformerError/);
  });
});

describe('Manager start-up that never gives up (cacheSyncTimeoutMs: Infinity)', () => {
  it('waits for an informer whose list is refused, warns every 30 s naming it and the error, /readyz says why, and runs once it syncs', async () => {
    const clock = new VirtualClock();
    const backend = new FakeBackend({ clock });
    backend.set(widgets, object(widgets, 'a'));
    let refuse = true;
    // Its first list is streamed (a watch with sendInitialEvents), then paginated lists: refuse both.
    backend.beforeList = () => {
      if (refuse) throw new UnavailableError('connection refused');
    };
    backend.beforeWatch = backend.beforeList;
    const logger = new MemoryLogger();
    const manager = new Manager({ clock, backend, logger, cacheSyncTimeoutMs: Number.POSITIVE_INFINITY });
    manager.informers.acquire({ backend, type: widgets });
    let controllerStarted = false;
    manager.add(async (signal) => {
      controllerStarted = true;
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    });
    const stop = new AbortController();
    const run = manager.start(stop.signal);
    await clock.advance(10 * 60_000);
    expect(controllerStarted).toBe(false);
    const report = await manager.ready();
    expect(report.ok).toBe(false);
    expect(report.checks['caches-synced']?.error).toBe(
      'caches are not synced: informer widget1s (its last list failed: connection refused)',
    );
    const waits = logger.records.filter((r) => r.message === 'Caches not synced yet; still waiting');
    expect(waits).toHaveLength(20);
    expect(waits[0]?.fields).toMatchObject({
      waitingFor: ['informer widget1s (its last list failed: connection refused)'],
      waitedMs: 30_000,
    });
    refuse = false;
    await clock.advance(60_000);
    expect(controllerStarted).toBe(true);
    expect((await manager.ready()).ok).toBe(true);
    stop.abort();
    await run;
    expect(() => new Manager({ cacheSyncTimeoutMs: -1 })).toThrow(/cacheSyncTimeoutMs/);
  });

  it("/readyz names a controller still waiting for its sources (openclarity's poller down at start), and is ready once they sync", async () => {
    const clock = new VirtualClock();
    const manager = new Manager({ clock });
    let synced: () => void = () => {};
    const whenSynced = new Promise<void>((resolve) => {
      synced = resolve;
    });
    const controller = new Controller<string>({
      name: 'vms',
      clock,
      reconciler: () => undefined,
      syncTimeoutMs: Number.POSITIVE_INFINITY,
      sources: [
        {
          name: 'poller',
          start: (signal) =>
            new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
          waitForSync: () => whenSynced,
        },
      ],
    });
    manager.add(controller);
    const stop = new AbortController();
    const run = manager.start(stop.signal);
    await clock.advance(5 * 60_000);
    const report = await manager.ready();
    expect(report.checks['controllers-synced']).toEqual({
      ok: false,
      error: 'sources are not synced: controller vms waits for poller',
    });
    synced();
    await clock.advance(1);
    expect((await manager.ready()).ok).toBe(true);
    stop.abort();
    await run;
  });
});

describe('Manager client reads of a synced kind', () => {
  it('take the reader at once: a get resolves in the first microtask turn, as a list does, and a miss is still a rejected NotFoundError', async () => {
    const h = await setup(undefined);
    // The first read starts the informer and waits for its sync.
    expect((await h.manager.client.get(widgets, key)).metadata.name).toBe('a');
    const seen: string[] = [];
    const get = h.manager.client.get(widgets, key).then(() => seen.push('get'));
    const list = h.manager.client.list(widgets).then(() => seen.push('list'));
    const miss = h.manager.client.get(widgets, { namespace: 'default', name: 'none' }).catch((e: unknown) => {
      seen.push(e instanceof NotFoundError ? 'not found' : String(e));
    });
    await Promise.resolve();
    // Before, each read awaited the reader's promise and its wait for sync: several turns later.
    expect(seen).toEqual(['get', 'list', 'not found']);
    await Promise.all([get, list, miss]);
    await h.stop();
  });
});
