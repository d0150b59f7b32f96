import {
  type ClientInterceptor,
  type Clock,
  type Fence,
  OptionsError,
  realClock,
  type WorkQueueMetrics,
} from '@converge/runtime';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { ControllerCollectors, type InstrumentableController } from './controller-metrics.ts';
import type { EventLoopMonitor } from './event-loop.ts';
import { InformerCollectors, type InstrumentableInformers } from './informer-metrics.ts';
import { LeaderCollectors, type LeadershipSource } from './leader-metrics.ts';
import { Names } from './names.ts';
import { isShardSource, ShardCollectors, type ShardSource } from './shard-metrics.ts';

export interface MetricsOptions {
  /**
   * The registry the metrics are registered in. Default: a new one, never prom-client's global
   * default registry, so that two managers in one process keep their own figures.
   */
  readonly registry?: Registry;
  /** The clock of the ages read at scrape time (resourceVersion age). Default the real clock. */
  readonly clock?: Clock;
  /**
   * Also export prom-client's default process and Node.js metrics into the registry (CPU, memory,
   * file descriptors, GC, and `nodejs_eventloop_lag_*` from `perf_hooks.monitorEventLoopDelay`),
   * as controller-runtime exports the process and Go collectors. Default true.
   */
  readonly defaultMetrics?: boolean;
}

/** What the metrics need of a `Client`: a way to observe its requests. */
export interface InstrumentableClient {
  readonly backend: unknown;
  observe(hooks: { readonly interceptor?: ClientInterceptor }): void;
}

/**
 * What the metrics read of a `Manager`: its informers and leadership, and when it has them its
 * leader term's fence, its shard member and its client.
 */
export interface InstrumentableManager {
  readonly informers: InstrumentableInformers;
  readonly leading: boolean;
  readonly fence?: Fence | undefined;
  readonly sharding?: ShardSource | undefined;
  /** Its client (a Manager's getter throws when it has no backend: then it is left out). */
  readonly client?: InstrumentableClient;
}

/** What `instrument` accepts, by what it has. */
export type Instrumentable =
  | InstrumentableController
  | InstrumentableInformers
  | InstrumentableManager
  | InstrumentableClient
  | ShardSource
  | LeadershipSource;

/** Options of {@link Metrics.instrument}. */
export interface InstrumentOptions {
  /**
   * The `name` label of `leader_election_master_status` for a manager or a leader elector
   * (controller-runtime uses the lease's name). Default: 'manager' for a manager, 'leader' for an
   * elector.
   */
  readonly name?: string;
}

/**
 * The Prometheus metrics of one manager: controller-runtime's names, labels and buckets, and
 * Converge's own, in one prom-client registry of their own.
 *
 * Nothing is global: create one per manager and `instrument` what it runs. Hooks added to a
 * controller cost a few counter increments per reconcile; gauges (queue depth by priority,
 * unfinished work, longest-running reconcile, max concurrent reconciles, resourceVersion age,
 * leadership) are read from the parts on each scrape.
 *
 * @example
 * const metrics = new Metrics();
 * metrics.instrument(manager);          // shared informers, leadership
 * metrics.instrument(websites);         // a Controller (from manager.controller(...).complete())
 * metrics.instrument(dynamic);          // a DynamicController: also per-kind figures
 * const text = await metrics.scrape();  // the text exposition format
 */
export class Metrics {
  readonly registry: Registry;
  readonly #controllers: ControllerCollectors;
  readonly #informers: InformerCollectors;
  readonly #leaders: LeaderCollectors;
  readonly #shards: ShardCollectors;
  readonly #managers: InstrumentableManager[] = [];
  readonly #loops: EventLoopMonitor[] = [];
  readonly #instrumented = new WeakSet<object>();

  constructor(options: MetricsOptions = {}) {
    if (typeof options !== 'object' || options === null)
      throw new OptionsError('options', options, 'an object');
    if (options.registry !== undefined && !(options.registry instanceof Registry)) {
      throw new OptionsError('registry', options.registry, 'a prom-client Registry');
    }
    this.registry = options.registry ?? new Registry();
    const clock = options.clock ?? realClock;
    this.#controllers = new ControllerCollectors(this.registry);
    this.#informers = new InformerCollectors(this.registry, clock);
    this.#leaders = new LeaderCollectors(this.registry);
    this.#shards = new ShardCollectors(this.registry, () => this.#controllers.controllers);
    const loops = (): readonly EventLoopMonitor[] => this.#loops;
    new Gauge({
      name: Names.loopStall,
      help: 'How late (seconds) the last event-loop heartbeat came: above the health threshold, /healthz fails',
      registers: [this.registry],
      collect() {
        let worst = 0;
        for (const loop of loops()) worst = Math.max(worst, loop.lastDelayMs, loop.overdueMs());
        this.set(worst / 1000);
      },
    });
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /**
   * Observes a part of an operator (idempotent per part):
   * - a `Manager`: its shared informers (list durations, relists and watch restarts by reason,
   *   resourceVersion age, synced), its leadership (`leader_election_master_status`), its shard
   *   member when it shards (`converge_shard_*`: members, epoch, phase, ownership changes, share
   *   of the keys), and its client's writes refused for a stale fence
   *   (`converge_fenced_writes_total`);
   * - a `Controller` or `DynamicController`: reconcile and work queue metrics, event-to-reconcile
   *   latency, causes, and for a dynamic controller per-kind figures; its keys in `/debug/keys`;
   * - an `InformerRegistry`: as for a manager's informers;
   * - a `Client` (one built by hand): its writes refused for a stale fence;
   * - a `ShardMember` run without `ManagerOptions.sharding`: as for a manager that shards (the
   *   first one added is the one `/debug/keys` shows and checks keys against);
   * - a `LeaderElector`: its leadership and the lease's transitions.
   *
   * A manager does not list the controllers added to it: instrument each one.
   */
  instrument(target: Instrumentable, options: InstrumentOptions = {}): this {
    if (typeof target !== 'object' || target === null) {
      throw new OptionsError(
        'target',
        target,
        'a Manager, Controller, DynamicController, InformerRegistry, Client, ShardMember or LeaderElector',
      );
    }
    if (this.#instrumented.has(target)) return this;
    const t = target as Partial<InstrumentableController & InstrumentableInformers> & {
      readonly informers?: unknown;
      readonly leading?: unknown;
      readonly isLeader?: unknown;
    };
    if (
      typeof t.observe === 'function' &&
      typeof t.inspect === 'function' &&
      typeof t.queueGauges === 'function'
    ) {
      this.#controllers.add(target as InstrumentableController);
    } else if (typeof t.informers === 'function' && typeof t.observe === 'function') {
      this.#informers.add(target as InstrumentableInformers);
    } else if (typeof t.informers === 'object' && t.informers !== null && 'leading' in t) {
      this.#manager(target as InstrumentableManager, options.name ?? 'manager');
    } else if (typeof t.observe === 'function' && 'backend' in t) {
      (target as InstrumentableClient).observe({ interceptor: this.#shards.interceptor() });
    } else if (isShardSource(target)) {
      this.#shards.add(target);
    } else if ('isLeader' in t) {
      this.#leaders.add(options.name ?? 'leader', target as LeadershipSource);
    } else {
      throw new OptionsError(
        'target',
        target,
        'a Manager, Controller, DynamicController, InformerRegistry, Client, ShardMember or LeaderElector',
      );
    }
    this.#instrumented.add(target);
    return this;
  }

  #manager(manager: InstrumentableManager, name: string): void {
    this.#informers.add(manager.informers);
    this.#leaders.add(name, manager);
    this.#managers.push(manager);
    const sharding = manager.sharding;
    if (isShardSource(sharding)) this.#shards.add(sharding);
    let client: InstrumentableClient | undefined;
    try {
      client = manager.client;
    } catch {
      client = undefined; // a manager without a backend has no client
    }
    if (typeof client?.observe === 'function' && !this.#instrumented.has(client)) {
      // Writes carry the shard member's fence when the manager shards, its leader term's otherwise.
      client.observe({ interceptor: this.#shards.interceptor(() => sharding?.fence ?? manager.fence) });
      this.#instrumented.add(client);
    }
  }

  /**
   * Hooks that count a work queue you create yourself (`new WorkQueue({ metrics })` or
   * `queue.observe(...)`) in the `workqueue_*` metrics under `name`: adds, retries, queue and work
   * durations, event-to-reconcile latency. Gauges and `/debug/keys` need a controller.
   */
  queueHooks(name: string): WorkQueueMetrics {
    if (typeof name !== 'string' || name === '') throw new OptionsError('name', name, 'a non-empty string');
    return this.#controllers.queueHooks(name);
  }

  /** Reports an event-loop monitor's stalls in `converge_event_loop_stall_seconds`. */
  addEventLoopMonitor(monitor: EventLoopMonitor): void {
    if (!this.#loops.includes(monitor)) this.#loops.push(monitor);
  }

  /** The controllers instrumented, for `/debug/keys`. */
  controllers(): readonly InstrumentableController[] {
    return this.#controllers.controllers;
  }

  /** The shard member of the instrumented manager, when it shards (for `/debug/keys`). */
  shardMember(): ShardSource | undefined {
    return this.#shards.members[0];
  }

  /** The fence of the instrumented manager's leader term while it leads (for `/debug/keys`). */
  leaderFence(): Fence | undefined {
    for (const manager of this.#managers)
      if (manager.leading && manager.fence !== undefined) return manager.fence;
    return undefined;
  }

  /** Every metric in the Prometheus text exposition format. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  /** The content type of {@link scrape}'s text. */
  get contentType(): string {
    return this.registry.contentType;
  }
}
