import {
  type Backend,
  ConflictError,
  type DeleteOptions,
  type DeleteResult,
  ExpiredError,
  type Fence,
  type GetOptions,
  InternalError,
  type KubeObject,
  type ListOptions,
  type ObjectKey,
  type ObjectList,
  type Patch,
  type PatchOptions,
  type ResourceType,
  TimeoutError,
  TooManyRequestsError,
  UnavailableError,
  type WatchEvent,
  type WatchOptions,
  type WriteOptions,
} from '@converge/runtime';
import type { Store } from '@converge/store';
import type { FaultName } from './faults.ts';
import { FAULT_RATES } from './faults.ts';
import type { SimProcess } from './process.ts';
import type { CrdStrategies } from './schema.ts';

/** The world as a process's backend sees it. */
export interface WorldPort {
  readonly store: Store;
  /** The write strategy of custom resources (CRD pruning, defaults, validation). */
  readonly schemas: CrdStrategies;
  /** Draws once; true when the fault is enabled, faults are on and the draw hits. Traced. */
  decide(fault: FaultName, probability: number, what: string): boolean;
  /** A draw for choices that are not faults (latency, durations): the schedule stream. */
  schedule(): number;
  ensureType(type: ResourceType): void;
  /** Something happened (the driver's sign that the world has not settled yet). */
  progressed(): void;
  /** Whether the API server is down now. */
  outage(): boolean;
  startOutage(process: SimProcess): void;
  crash(process: SimProcess, after: string): void;
  /** A write the store accepted, for the trace, the quiescence check and the ledger. */
  wrote(
    process: SimProcess | undefined,
    verb: string,
    type: ResourceType,
    key: { readonly namespace?: string | undefined; readonly name?: string | undefined } | undefined,
  ): void;
  trace(line: string): void;
}

type Verb = 'get' | 'list' | 'create' | 'update' | 'updateStatus' | 'patch' | 'delete';

const WRITES: ReadonlySet<Verb> = new Set(['create', 'update', 'updateStatus', 'patch', 'delete']);
const CONFLICTABLE: ReadonlySet<Verb> = new Set(['update', 'updateStatus', 'patch']);

const never = <T>(): Promise<T> => new Promise<T>(() => {});

function keyText(
  type: ResourceType,
  key: { readonly namespace?: string | undefined; readonly name?: string | undefined } | undefined,
): string {
  const ns = key?.namespace ? `${key.namespace}/` : '';
  return `${type.plural}${type.group ? `.${type.group}` : ''} ${ns}${key?.name ?? ''}`;
}

function rvOf(event: WatchEvent): number {
  const rv = event.type === 'BOOKMARK' ? event.resourceVersion : event.object.metadata.resourceVersion;
  return Number(rv ?? 0);
}

/**
 * The Backend one simulated process talks to: the world's store behind the fault layer. Each call
 * waits while the process is paused and never returns once it is dead; faults are drawn from the
 * world's seeded generator. A process with no faults (the user's setup) sees the store as it is.
 */
export class SimBackend implements Backend {
  readonly name: string;
  readonly #world: WorldPort;
  readonly #process: SimProcess | undefined;

  constructor(world: WorldPort, process?: SimProcess, name = 'simulation') {
    this.#world = world;
    this.#process = process;
    this.name = name;
  }

  resolveType(apiVersion: string, kind: string): ResourceType | undefined {
    return this.#world.store.resolveType(apiVersion, kind);
  }

  /** A get is a consistent read (kube-apiserver reads etcd for it): never served by a lagging replica. */
  get<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    options: GetOptions = {},
  ): Promise<T> {
    return this.#call('get', type, key, () => this.#world.store.get<T>(type, key, options));
  }

  list<T extends KubeObject = KubeObject>(
    type: ResourceType,
    options: ListOptions = {},
  ): Promise<ObjectList<T>> {
    return this.#call('list', type, { namespace: options.namespace ?? '', name: '' }, () => {
      // Only a list that accepts any revision (`resourceVersion: '0'`, served from the watch cache)
      // may be stale; one without a resourceVersion is a consistent read.
      const stale =
        options.continue === undefined && options.resourceVersion === '0'
          ? this.#staleRevision(options.resourceVersion)
          : undefined;
      if (stale === undefined) return this.#world.store.list<T>(type, options);
      return this.#world.store.list<T>(type, {
        ...options,
        resourceVersion: String(stale),
        resourceVersionMatch: 'Exact',
      });
    });
  }

  create<T extends KubeObject = KubeObject>(
    type: ResourceType,
    object: T,
    options?: WriteOptions,
  ): Promise<T> {
    return this.#call('create', type, object.metadata, () =>
      this.#world.store.create<T>(type, this.#world.schemas.admit(type, object), options),
    );
  }

  update<T extends KubeObject = KubeObject>(
    type: ResourceType,
    object: T,
    options?: WriteOptions,
  ): Promise<T> {
    return this.#call('update', type, object.metadata, async () =>
      this.#world.store.update<T>(type, await this.#admitted(type, object), options),
    );
  }

  updateStatus<T extends KubeObject = KubeObject>(
    type: ResourceType,
    object: T,
    options?: WriteOptions,
  ): Promise<T> {
    return this.#call('updateStatus', type, object.metadata, async () =>
      this.#world.store.updateStatus<T>(type, await this.#admitted(type, object), options),
    );
  }

  patch<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    patch: Patch,
    options?: PatchOptions,
  ): Promise<T> {
    return this.#call('patch', type, key, async () => {
      const { store, schemas } = this.#world;
      if (schemas.crdOf(type) !== undefined) {
        // The patched object must pass the CRD's schema and rules, as on the server.
        const old = await store.get(type, key).catch(() => undefined);
        const result = await store.patch<T>(type, key, patch, { ...options, dryRun: true });
        schemas.admit(type, result, old);
      }
      return store.patch<T>(type, key, patch, options);
    });
  }

  /** An update of a custom resource as the server's strategy leaves it (the stored object is the old one). */
  async #admitted<T extends KubeObject>(type: ResourceType, object: T): Promise<T> {
    const { store, schemas } = this.#world;
    if (schemas.crdOf(type) === undefined) return object;
    const old = await store
      .get(type, { namespace: object.metadata.namespace ?? '', name: object.metadata.name ?? '' })
      .catch(() => undefined);
    return schemas.admit(type, object, old);
  }

  delete<T extends KubeObject = KubeObject>(
    type: ResourceType,
    key: ObjectKey,
    options?: DeleteOptions,
  ): Promise<DeleteResult<T>> {
    return this.#call('delete', type, key, () => this.#world.store.delete<T>(type, key, options));
  }

  /**
   * Raises the store's mark of `fence.name` (what `POST /converge/fences` does on the embedded API
   * server): the simulated server fences like the real one. Waits while the process is paused and
   * fails during an outage, with no fault of its own (no draw from the schedule).
   */
  async announceFence(fence: Fence, signal?: AbortSignal): Promise<Fence> {
    const p = this.#process;
    if (p !== undefined) await p.gate();
    signal?.throwIfAborted();
    if (p !== undefined && this.#world.outage())
      throw new UnavailableError('the server is currently unable to handle the request (announce a fence)');
    this.#world.progressed();
    return await this.#world.store.announceFence(fence, signal);
  }

  watch<T extends KubeObject = KubeObject>(
    type: ResourceType,
    options: WatchOptions = {},
  ): AsyncIterable<WatchEvent<T>> {
    return { [Symbol.asyncIterator]: () => this.#watch<T>(type, options) };
  }

  /** The revision a lagging replica serves a read at, or undefined when the read is current. */
  #staleRevision(resourceVersion: string | undefined): number | undefined {
    const p = this.#process;
    if (p === undefined || p.stale === undefined) return undefined;
    if (p.clock.now() >= p.stale.until) {
      p.stale = undefined;
      return undefined;
    }
    // A watch from a newer revision than the replica has waits for it on a real server; here it is
    // served current (the replica "caught up" for it).
    if (resourceVersion !== undefined && resourceVersion !== '' && resourceVersion !== '0') {
      if (Number(resourceVersion) > p.stale.revision) return undefined;
    }
    if (p.stale.revision <= this.#world.store.compactedRevision) return undefined;
    return p.stale.revision;
  }

  async #call<R>(
    verb: Verb,
    type: ResourceType,
    key: { readonly namespace?: string | undefined; readonly name?: string | undefined } | undefined,
    run: () => Promise<R>,
  ): Promise<R> {
    const world = this.#world;
    world.ensureType(type);
    world.progressed();
    const p = this.#process;
    if (p === undefined) return this.#recorded(verb, type, key, await run());
    await p.gate();
    const latency = world.schedule() < 0.5 ? 0 : 1 + Math.floor(world.schedule() * 5);
    if (latency > 0) await p.clock.sleep(latency);
    await p.gate();
    const what = `${verb} ${keyText(type, key)}`;
    if (world.outage())
      throw new UnavailableError(`the server is currently unable to handle the request (${what})`);
    if (world.decide('outages', FAULT_RATES.outage, `outage from ${p.id}'s ${what}`)) {
      world.startOutage(p);
      throw new UnavailableError(`the server is currently unable to handle the request (${what})`);
    }
    const write = WRITES.has(verb);
    if (write) {
      if (
        CONFLICTABLE.has(verb) &&
        world.decide('conflicts', FAULT_RATES.conflict, `409 on ${p.id}'s ${what}`)
      ) {
        throw new ConflictError(
          `Operation cannot be fulfilled on ${keyText(type, key)}: the object has been modified; please apply your changes to the latest version and try again`,
          { details: { name: key?.name ?? '', group: type.group, kind: type.plural } },
        );
      }
      if (world.decide('server-errors', FAULT_RATES.serverError, `5xx/429 on ${p.id}'s ${what}`)) {
        throw serverError(world.schedule(), what);
      }
    }
    let result: R | undefined;
    let failure: unknown;
    let failed = false;
    try {
      result = this.#recorded(verb, type, key, await run());
    } catch (error) {
      failure = error;
      failed = true;
    }
    if (
      write &&
      !failed &&
      world.decide('server-errors', FAULT_RATES.lostAnswer, `504 after ${p.id}'s ${what} applied`)
    ) {
      failure = new TimeoutError(`the request timed out after it was applied (${what})`);
      failed = true;
    }
    if (world.decide('crashes', FAULT_RATES.crash, `${p.id} crashes after ${what}`)) {
      world.crash(p, what);
      return never();
    }
    await p.gate();
    if (failed) throw failure;
    return result as R;
  }

  #recorded<R>(
    verb: Verb,
    type: ResourceType,
    key: { readonly namespace?: string | undefined; readonly name?: string | undefined } | undefined,
    result: R,
  ): R {
    if (!WRITES.has(verb)) return result;
    // A create with generateName learns its name from the result.
    const stored = verb === 'delete' ? undefined : (result as KubeObject).metadata;
    this.#world.wrote(this.#process, verb, type, stored ?? key);
    return result;
  }

  async *#watch<T extends KubeObject>(
    type: ResourceType,
    options: WatchOptions,
  ): AsyncGenerator<WatchEvent<T>> {
    const world = this.#world;
    world.ensureType(type);
    const p = this.#process;
    if (p === undefined) {
      yield* world.store.watch<T>(type, options);
      return;
    }
    await p.gate();
    if (world.outage())
      throw new UnavailableError(
        `the server is currently unable to handle the request (watch ${type.plural})`,
      );
    const clock = p.clock;
    const queue: { readonly event: WatchEvent<T>; readonly at: number }[] = [];
    let lastAt = 0;
    let done = false;
    let error: unknown;
    let wake: (() => void) | undefined;
    const notify = () => {
      const w = wake;
      wake = undefined;
      w?.();
    };
    const inner = new AbortController();
    const stop = () => {
      inner.abort();
      notify();
    };
    options.signal?.addEventListener('abort', stop, { once: true });
    const state = {
      cut: false,
      wake: () => notify(),
      pending: () => queue.length,
      release: () => {
        closeAt = undefined;
        holdUntil = 0;
        const now = clock.now();
        for (let i = 0; i < queue.length; i++)
          queue[i] = { event: (queue[i] as (typeof queue)[number]).event, at: now };
        lastAt = now;
        notify();
      },
    };
    p.watches.set(inner, state);
    const stale = this.#staleRevision(options.resourceVersion);
    let holdUntil = stale === undefined ? 0 : (p.stale?.until ?? 0);
    const what = `watch ${type.plural} of ${p.id}`;
    let closeAt: number | undefined;
    let closeWith410 = false;
    if (world.decide('watch-close', FAULT_RATES.watchClose, `${what} will close`)) {
      closeAt = clock.now() + 1_000 + Math.floor(world.schedule() * 29_000);
      closeWith410 = world.schedule() < 0.5;
    }
    const initial =
      options.resourceVersion === undefined ||
      options.resourceVersion === '' ||
      options.resourceVersion === '0';
    let from = options;
    if (stale !== undefined && initial) {
      // A lagging replica's initial events are its own state, at its revision: the cache is filled
      // with what the operator saw before it restarted (Sieve's time travel), then catches up.
      const page = await world.store.list<T>(type, {
        ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
        ...(options.labelSelector === undefined ? {} : { labelSelector: options.labelSelector }),
        ...(options.fieldSelector === undefined ? {} : { fieldSelector: options.fieldSelector }),
        ...(options.shardSelector === undefined ? {} : { shardSelector: options.shardSelector }),
        ...(options.metadataOnly === true ? { metadataOnly: true } : {}),
        resourceVersion: String(stale),
        resourceVersionMatch: 'Exact',
      });
      const now = clock.now();
      for (const object of page.items) queue.push({ event: { type: 'ADDED', object }, at: now });
      if (options.sendInitialEvents === true)
        queue.push({
          event: { type: 'BOOKMARK', resourceVersion: String(stale), initialEventsEnd: true },
          at: now,
        });
      lastAt = now;
      const { sendInitialEvents: _initial, ...rest } = options;
      from = { ...rest, resourceVersion: String(stale) };
    }
    const source = world.store.watch<T>(type, { ...from, signal: inner.signal });
    void (async () => {
      try {
        for await (const event of source) {
          let at = clock.now();
          if (holdUntil > at && rvOf(event) > (stale ?? 0)) at = holdUntil;
          if (
            event.type !== 'BOOKMARK' &&
            world.decide(
              'watch-delay',
              FAULT_RATES.watchDelay,
              `delay ${event.type} ${keyText(type, event.object.metadata)} to ${p.id}`,
            )
          )
            at += 10 + Math.floor(world.schedule() * 2_000);
          lastAt = Math.max(lastAt, at);
          queue.push({ event, at: lastAt });
          notify();
        }
      } catch (e) {
        if (!inner.signal.aborted) error = e;
      } finally {
        done = true;
        notify();
      }
    })();
    try {
      for (;;) {
        if (p.clock.dead) return await never<void>();
        if (options.signal?.aborted) return;
        const now = clock.now();
        if (closeAt !== undefined && now >= closeAt) {
          world.trace(`${Math.round(now)}ms ${what} closed${closeWith410 ? ' with 410' : ''}`);
          if (closeWith410)
            throw new ExpiredError(`too old resource version (the watch of ${type.plural} was closed)`);
          return;
        }
        if (state.cut)
          throw new UnavailableError(`the watch of ${type.plural} was cut: the server is unavailable`);
        const head = queue[0];
        if (head !== undefined && head.at <= now && !clock.paused) {
          queue.shift();
          if (
            world.decide(
              'crashes',
              FAULT_RATES.crashOnEvent,
              `${p.id} crashes as a ${head.event.type} of ${type.plural} arrives`,
            )
          ) {
            world.crash(p, `a ${head.event.type} of ${type.plural} arrived`);
            return await never<void>();
          }
          yield head.event;
          continue;
        }
        if (head === undefined && done) {
          if (error !== undefined) throw error instanceof Error ? error : new Error(String(error));
          return;
        }
        let until = head?.at;
        if (closeAt !== undefined && (until === undefined || closeAt < until)) until = closeAt;
        await new Promise<void>((resolve) => {
          const timer = until === undefined ? undefined : clock.setTimer(notify, until - now);
          wake = () => {
            timer?.cancel();
            resolve();
          };
        });
        await p.gate();
      }
    } finally {
      options.signal?.removeEventListener('abort', stop);
      inner.abort();
      p.watches.delete(inner);
    }
  }
}

function serverError(draw: number, what: string): Error {
  if (draw < 0.4)
    return new InternalError(`Internal error occurred: etcdserver: request timed out (${what})`);
  if (draw < 0.7)
    return new UnavailableError(`the server is currently unable to handle the request (${what})`);
  return new TooManyRequestsError(
    `the server has received too many requests and has asked us to try again later (${what})`,
    {
      details: { retryAfterSeconds: 1 },
    },
  );
}
