/**
 * The opinionated watcher against the real in-memory store (generation, finalizers and deletion as
 * the apiserver does them) through the runtime Client, fed by a real Informer: an object is added
 * and gets the finalizer; a restart (a new watcher and informer, an initial list) syncs instead of
 * adding; an object deleted while no watcher runs gets its delete handler when one starts again,
 * then loses the finalizer, then is gone. No timers: every wait is on events.
 */
import {
  Client,
  Informer,
  InformerController,
  isNotFound,
  type KubeObject,
  noopLogger,
  noRetries,
  type ObjectEvent,
  OpinionatedReconciler,
  OpinionatedWatcher,
  type ResourceAction,
  type ResourceType,
  type ResourceWatcher,
} from '@converge/runtime';
import { Store } from '@converge/store';
import { afterEach, describe, expect, it } from 'vitest';

const FINAL = 'operator.v1.Widget.example.com';
const KEY = { namespace: 'default', name: 'w' };

interface Running {
  /** Handler calls so far, as `<method>` strings. */
  readonly calls: string[];
  /** Resolves once `check` holds, re-checked after every event and every handler call. */
  until(check: () => boolean | Promise<boolean>): Promise<void>;
  /** The resourceVersion of the object in the informer's cache. */
  cachedVersion(): string | undefined;
  /** Resolves when every event delivered so far has been handled. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

const running: Running[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
});

/**
 * One "operator process": an informer and an opinionated watcher whose calls are made one at a
 * time in event order (what an informer controller does for one object), recorded in `calls`.
 */
async function startOperator(
  store: Store,
  type: ResourceType,
  extra: Partial<ResourceWatcher> = {},
): Promise<Running> {
  const controller = new AbortController();
  const client = new Client({ backend: store });
  const calls: string[] = [];
  const errors: unknown[] = [];
  const handlers: ResourceWatcher = {
    add: () => void calls.push('add'),
    update: () => void calls.push('update'),
    sync: () => void calls.push('sync'),
    delete: (object, context) => {
      calls.push('delete');
      return extra.delete?.(object, context);
    },
  };
  const watcher = new OpinionatedWatcher({ type, client, handlers });
  const informer = new Informer({ backend: store, type });
  let chain = Promise.resolve();
  const waiters = new Set<() => Promise<void>>();
  const notify = async (): Promise<void> => {
    for (const waiter of [...waiters]) await waiter();
  };
  const context = { signal: controller.signal, logger: noopLogger, attempt: 0 };
  const handle = async (event: ObjectEvent<KubeObject>): Promise<void> => {
    if (event.type === 'create') await watcher.add(event.object, context);
    else if (event.type === 'update') await watcher.update(event.oldObject, event.object, context);
    else if (event.type === 'delete') watcher.delete(event.object, context);
  };
  informer.subscribe((event) => {
    chain = chain
      .then(() => handle(event))
      .catch((error: unknown) => void errors.push(error))
      .then(notify);
  });
  const started = informer.start(controller.signal);
  await informer.waitForSync(controller.signal);
  const r: Running = {
    calls,
    cachedVersion: () => informer.cache.get(KEY)?.metadata.resourceVersion,
    until: (check) =>
      new Promise<void>((resolve, reject) => {
        const waiter = async (): Promise<void> => {
          try {
            if (await check()) {
              waiters.delete(waiter);
              resolve();
            }
          } catch (error) {
            waiters.delete(waiter);
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        };
        waiters.add(waiter);
        void waiter();
      }),
    idle: async () => {
      await chain;
      expect(errors).toEqual([]);
    },
    stop: async () => {
      controller.abort();
      await started.catch(() => undefined);
      await chain;
    },
  };
  running.push(r);
  return r;
}

async function stored(store: Store, type: ResourceType): Promise<KubeObject | undefined> {
  try {
    return await store.get(type, KEY);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

function widgets(store: Store): ResourceType {
  return store.registerType({
    group: 'example.com',
    version: 'v1',
    kind: 'Widget',
    plural: 'widgets',
    namespaced: true,
  });
}

const newWidget = {
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: KEY,
  spec: { size: 1 },
} as KubeObject;

/** Runs `controller` with an informer of `type` until the returned stop is called. */
function runController(
  store: Store,
  type: ResourceType,
  controller: InformerController,
): () => Promise<void> {
  const signal = new AbortController();
  controller.addInformer(new Informer({ backend: store, type }), type.kind);
  const started = controller.start(signal.signal);
  return async () => {
    signal.abort();
    await started;
  };
}

/** Resolves once `check` holds, re-checked after every change of the kind in the store. */
async function untilStored(
  store: Store,
  type: ResourceType,
  check: (object: KubeObject | undefined) => boolean,
): Promise<void> {
  const signal = new AbortController();
  try {
    const list = await store.list(type);
    if (check(list.items.find((o) => o.metadata.name === KEY.name))) return;
    const watch = store.watch(type, { resourceVersion: list.resourceVersion, signal: signal.signal });
    for await (const event of watch) {
      if (event.type !== 'BOOKMARK' && check(await stored(store, type))) return;
    }
  } finally {
    signal.abort();
  }
}

describe('OpinionatedWatcher against the in-memory store', () => {
  it('add + finalizer on create; sync (not add) after a restart; a delete while down runs delete, drops the finalizer, and the object goes', async () => {
    const store = new Store();
    const type = widgets(store);

    // 1. Created while the operator runs: add, then our finalizer (in-progress first, then final).
    const first = await startOperator(store, type);
    await store.create(type, newWidget);
    await first.until(async () => (await stored(store, type))?.metadata.finalizers?.includes(FINAL) === true);
    const finalVersion = (await stored(store, type))?.metadata.resourceVersion;
    // Wait until the echo of the last patch was handled too, so any call it caused is counted.
    await first.until(() => first.cachedVersion() === finalVersion);
    await first.idle();
    expect(first.calls).toEqual(['add']);
    expect((await stored(store, type))?.metadata.finalizers).toEqual([FINAL]);
    await first.stop();

    // 2. Restart: the initial list sees our finalizer, so sync, not add.
    const second = await startOperator(store, type);
    await second.until(() => second.calls.length > 0);
    await second.idle();
    expect(second.calls).toEqual(['sync']);
    await second.stop();

    // 3. Deleted while no operator runs: the finalizer holds it.
    await store.delete(type, KEY);
    const held = await stored(store, type);
    expect(held?.metadata.deletionTimestamp).toBeDefined();
    expect(held?.metadata.finalizers).toEqual([FINAL]);

    // 4. Restart: delete runs while the object still exists, then the finalizer goes and so does the object.
    let existedDuringDelete: boolean | undefined;
    const third = await startOperator(store, type, {
      delete: async () => {
        existedDuringDelete = (await stored(store, type))?.metadata.finalizers?.includes(FINAL) === true;
      },
    });
    await third.until(async () => (await stored(store, type)) === undefined);
    await third.idle();
    expect(third.calls).toEqual(['delete']);
    expect(existedDuringDelete).toBe(true);
  });

  it('under an InformerController whose new events drop pending retries (the default), an add that failed is run again on the echo of the in-progress finalizer', async () => {
    const store = new Store();
    const type = widgets(store);
    const calls: string[] = [];
    let failures = 1;
    const watcher = new OpinionatedWatcher({
      type,
      client: new Client({ backend: store }),
      handlers: {
        add: () => {
          calls.push('add');
          if (failures-- > 0) throw new Error('add failed');
        },
        update: () => void calls.push('update'),
      },
    });
    // No retries at all: only an event can make add run again.
    const controller = new InformerController({ retryPolicy: noRetries, needLeaderElection: false });
    controller.addWatcher(watcher, type.kind);
    const stop = runController(store, type, controller);
    await store.create(type, newWidget);
    await untilStored(store, type, (o) => o?.metadata.finalizers?.includes(FINAL) === true);
    await stop();
    expect(calls).toEqual(['add', 'add']);
    expect((await stored(store, type))?.metadata.finalizers).toEqual([FINAL]);
  });
});

describe('OpinionatedReconciler against the in-memory store', () => {
  it('create is delegated then the finalizer added; a delete is delegated as delete on the deletionTimestamp, then the object goes', async () => {
    const store = new Store();
    const type = widgets(store);
    const actions: ResourceAction[] = [];
    const reconciler = new OpinionatedReconciler({
      type,
      client: new Client({ backend: store }),
      reconciler: { reconcile: ({ action }) => void actions.push(action) },
    });
    const controller = new InformerController({ retryPolicy: noRetries, needLeaderElection: false });
    controller.addReconciler(reconciler, type.kind);
    const stop = runController(store, type, controller);
    await store.create(type, newWidget);
    await untilStored(store, type, (o) => o?.metadata.finalizers?.includes(FINAL) === true);
    await store.delete(type, KEY);
    await untilStored(store, type, (o) => o === undefined);
    await stop();
    // The update is the echo of the finalizer patch, delegated as app-sdk does.
    expect(actions).toEqual(['create', 'update', 'delete']);
  });
});
