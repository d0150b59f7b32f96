/**
 * The workload of the runtime-kinds leak tests (`leaks.test.ts`) and of `bench/runtime-kinds.bench.ts`
 * (not part of any package): many kinds with a few objects each, a handler that exercises every
 * path of the shared queue, and a serve/stop cycle that stops every kind only once all of it is
 * happening.
 *
 * Objects of every kind, and what the handler does with them:
 * - `ok-0`: reconciled (`done()`), its rate-limiter entry forgotten;
 * - `fail-0`: fails every time, so it is retried with backoff (a rate-limiter entry, a delayed key);
 * - `later-0`: `requeueAfter(60 000)` (a delayed key and a queue timer);
 * - `hold-0`, in every `holdEvery`-th kind only (served with `maxConcurrent: 2`): the reconcile
 *   waits until its signal aborts, so it is in flight when its kind stops.
 *
 * @module
 */
import {
  type Backend,
  done,
  ExponentialRateLimiter,
  type KindContext,
  type KindRequest,
  KindStoppedError,
  type KubeObject,
  kindId,
  type RateLimiter,
  type ReconcileReturn,
  type ResourceType,
  requeueAfter,
  resourceType,
  type ServesKinds,
} from '@converge/runtime';

/** A cycle that has not got every object reconciled after this long is reported as stuck. */
const STUCK_MS = 30_000;

/** The API group of the workload's kinds. */
export const LEAK_GROUP = 'leaks.converge.dev';

/** `count` namespaced kinds `Leak0`…, plural `leak0s`…, in {@link LEAK_GROUP}. */
export function leakKinds(count: number): ResourceType[] {
  return Array.from({ length: count }, (_, i) =>
    resourceType({
      group: LEAK_GROUP,
      version: 'v1',
      kind: `Leak${i}`,
      plural: `leak${i}s`,
      namespaced: true,
    }),
  );
}

/** The objects of the kind at `index` (see the module overview), in namespace `default`. */
export function leakObjects(kind: ResourceType, index: number, holdEvery: number): KubeObject[] {
  const names = ['ok-0', 'fail-0', 'later-0', ...(index % holdEvery === 0 ? ['hold-0'] : [])];
  return names.map(
    (name) =>
      ({
        apiVersion: `${kind.group}/${kind.version}`,
        kind: kind.kind,
        metadata: { name, namespace: 'default' },
        spec: { touched: 0 },
      }) as KubeObject,
  );
}

/**
 * A rate limiter that counts the requests it holds state for: `when` without a later `forget`.
 * After every kind stopped, nothing may be left.
 */
export class CountingRateLimiter implements RateLimiter {
  readonly #inner = new ExponentialRateLimiter();
  readonly #held = new Set<string>();

  /** Requests with backoff state now. */
  get held(): number {
    return this.#held.size;
  }

  when(id: string): number {
    this.#held.add(id);
    return this.#inner.when(id);
  }

  forget(id: string): void {
    this.#held.delete(id);
    this.#inner.forget(id);
  }

  numRequeues(id: string): number {
    return this.#inner.numRequeues(id);
  }
}

/** What one serve/stop cycle saw. */
export interface CycleReport {
  /** Reconciles started while the kinds were served. */
  readonly reconciles: number;
  /** Reconciles in flight when the kinds were told to stop (held ones). */
  readonly inFlightAtStop: number;
  /** Serves stopped before their kind synced (they reject with a KindStoppedError). */
  readonly stoppedWhileSyncing: number;
}

/** Options of {@link KindsWorkload}. */
export interface KindsWorkloadOptions {
  readonly kinds: readonly ResourceType[];
  /** Every this many kinds (from the first) hold one reconcile until their kind stops. Default 10. */
  readonly holdEvery?: number;
  /**
   * Kinds (from the first) that, after the main stop of each cycle, are served and stopped again
   * at once, before their informer synced. Default 5.
   */
  readonly stopWhileSyncing?: number;
}

/** The handler and serve/stop cycle of the module overview. One controller at a time. */
export class KindsWorkload {
  readonly kinds: readonly ResourceType[];
  readonly holdEvery: number;
  readonly #stopWhileSyncing: number;
  /** `kind/name` of every object that must be seen reconciled in a cycle (holds excluded). */
  readonly #expected: ReadonlySet<string>;
  readonly #holdKinds: number;
  #seen = new Set<string>();
  #holding = 0;
  #reconciles = 0;
  #serving = false;
  /** `kind/name` of the object each cycle updates. */
  readonly #touchId: string | undefined;
  /** resourceVersions of the touched object that reconciles saw this cycle. */
  #touchSeen = new Set<string>();
  /** The touched object's new resourceVersion, until a reconcile saw it. */
  #touch: string | undefined;
  #wake: (() => void) | undefined;
  /** Reconciles started while no kind was being served: must stay 0. */
  reconcilesWhileStopped = 0;

  constructor(options: KindsWorkloadOptions) {
    this.kinds = options.kinds;
    this.holdEvery = options.holdEvery ?? 10;
    this.#stopWhileSyncing = Math.min(options.stopWhileSyncing ?? 5, this.kinds.length);
    const expected = new Set<string>();
    let holds = 0;
    this.kinds.forEach((kind, i) => {
      for (const object of leakObjects(kind, i, this.holdEvery)) {
        if (object.metadata.name?.startsWith('hold') === true) holds++;
        else expected.add(`${kind.plural}/${object.metadata.name}`);
      }
    });
    this.#expected = expected;
    this.#holdKinds = holds;
    const touched = this.kinds[Math.min(1, this.kinds.length - 1)];
    this.#touchId = touched === undefined ? undefined : `${touched.plural}/ok-0`;
  }

  /** Every object of every kind. */
  objects(): { readonly kind: ResourceType; readonly object: KubeObject }[] {
    return this.kinds.flatMap((kind, i) =>
      leakObjects(kind, i, this.holdEvery).map((object) => ({ kind, object })),
    );
  }

  /** Writes every object through `backend` (create). */
  async createObjects(backend: Backend, concurrency = 16): Promise<void> {
    const all = this.objects();
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < all.length) {
        const item = all[next++];
        if (item !== undefined) await backend.create(item.kind, item.object);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  }

  /** The handler every kind is served with. */
  readonly handler = async (request: KindRequest, context: KindContext): Promise<ReconcileReturn> => {
    this.#reconciles++;
    if (!this.#serving) this.reconcilesWhileStopped++;
    const id = `${request.kind.resource}/${request.name}`;
    if (id === this.#touchId) {
      const cached = context.cache.get({ namespace: request.namespace, name: request.name });
      const version = cached?.metadata.resourceVersion ?? '';
      this.#touchSeen.add(version);
      if (version === this.#touch) this.#touch = undefined;
    }
    if (request.name.startsWith('hold')) {
      this.#holding++;
      this.#check();
      try {
        await aborted(context.signal);
      } finally {
        this.#holding--;
      }
      throw context.signal.reason;
    }
    this.#seen.add(id);
    this.#check();
    if (request.name.startsWith('fail')) throw new Error(`${id} fails until its kind stops`);
    if (request.name.startsWith('later')) return requeueAfter(60_000);
    return done();
  };

  /**
   * One cycle: serves every kind (every `holdEvery`-th with `maxConcurrent: 2`), updates the `ok`
   * object of the second kind through `backend` (so an event comes over the watch), waits until
   * every object was reconciled, the update was seen, and every hold is in flight; then stops every
   * kind at once, and serves and stops the first `stopWhileSyncing` kinds again before they sync.
   */
  async cycle(controller: ServesKinds, backend: Backend): Promise<CycleReport> {
    this.#seen = new Set();
    this.#touchSeen = new Set();
    this.#reconciles = 0;
    this.#serving = true;
    await Promise.all(
      this.kinds.map((kind, i) =>
        controller.serve(kind, this.handler, i % this.holdEvery === 0 ? { maxConcurrent: 2 } : {}),
      ),
    );
    const touched = this.kinds[Math.min(1, this.kinds.length - 1)];
    if (touched !== undefined) {
      const current = await backend.get(touched, { namespace: 'default', name: 'ok-0' });
      const spec = (current as { spec?: { touched?: number } }).spec;
      const written = await backend.update(touched, {
        ...current,
        spec: { touched: (spec?.touched ?? 0) + 1 },
      });
      const version = written.metadata.resourceVersion ?? '';
      // The reconcile of the new version may already have run (the event can beat the answer).
      if (!this.#touchSeen.has(version)) this.#touch = version;
    }
    // A guard against hanging, not a figure of time: a cycle that cannot finish says where it stands.
    let guard: ReturnType<typeof setTimeout> | undefined;
    await new Promise<void>((resolve, reject) => {
      guard = setTimeout(() => {
        this.#wake = undefined;
        reject(new Error(`serve/stop cycle stuck: ${JSON.stringify(this.progress())}`));
      }, STUCK_MS);
      this.#wake = resolve;
      this.#check();
    }).finally(() => clearTimeout(guard));
    const inFlightAtStop = this.#holding;
    const reconciles = this.#reconciles;
    await Promise.all(this.kinds.map((kind) => controller.stopServing(kind)));
    this.#serving = false;
    let stoppedWhileSyncing = 0;
    const again = this.kinds.slice(0, this.#stopWhileSyncing).map((kind) => {
      const serving = controller.serve(kind, this.handler);
      return { kind, serving };
    });
    await Promise.all(again.map(({ kind }) => controller.stopServing(kind)));
    for (const { kind, serving } of again) {
      try {
        await serving;
      } catch (error) {
        if (!(error instanceof KindStoppedError) || error.kind !== kindId(kind)) throw error;
        stoppedWhileSyncing++;
      }
    }
    return { reconciles, inFlightAtStop, stoppedWhileSyncing };
  }

  /** Where the current cycle stands (for diagnostics). */
  progress(): Record<string, number | boolean> {
    return {
      seen: this.#seen.size,
      expected: this.#expected.size,
      holding: this.#holding,
      holds: this.#holdKinds,
      touchPending: this.#touch !== undefined,
      reconciles: this.#reconciles,
    };
  }

  #check(): void {
    if (this.#wake === undefined) return;
    if (this.#touch !== undefined || this.#holding < this.#holdKinds) return;
    if (this.#seen.size < this.#expected.size) return;
    const wake = this.#wake;
    this.#wake = undefined;
    wake();
  }
}

function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
