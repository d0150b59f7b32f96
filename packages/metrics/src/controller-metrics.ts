import type {
  CauseType,
  ControllerMetrics as ControllerHooks,
  ControllerKeyInfo,
  DynamicControllerMetrics,
  ReconcileResultLabel,
  WorkQueueMetrics,
} from '@converge/runtime';
import { Gauge, type Registry } from 'prom-client';
import { type CounterChild, FastCounter, FastHistogram, type HistogramChild } from './fast-metrics.ts';
import {
  EVENT_LATENCY_BUCKETS,
  LIST_BUCKETS,
  Names,
  RECONCILE_TIME_BUCKETS,
  WORKQUEUE_BUCKETS,
} from './names.ts';
import { isPanic } from './panic.ts';

/** What the metrics need of a controller (a `Controller` or a `DynamicController`). */
export interface InstrumentableController {
  readonly name: string;
  readonly maxConcurrentReconciles: number;
  /**
   * Whether it runs only while its manager leads. In a manager that shards, a controller that runs
   * without leader election (a sharded controller's default) is counted as sharded by the
   * manager's member (`converge_shard_queue_keys`, `owned` in `/debug/keys`).
   */
  /** Whether it reconciles only its shard member's keys (`Controller.sharded`). */
  readonly sharded?: boolean;
  readonly needLeaderElection?: boolean;
  observe(hooks: {
    readonly metrics?: DynamicControllerMetrics;
    readonly queueMetrics?: WorkQueueMetrics;
  }): void;
  queueGauges(): {
    readonly unfinishedWorkMs: number;
    readonly longestRunningMs: number;
    readonly depthByPriority: readonly { readonly priority: number; readonly size: number }[];
  };
  inspect(limit?: number): ControllerKeyInfo<unknown>[];
  /** Keys flagged as hot loops now (a controller without it counts none). */
  hotLoopKeys?(): number;
}

/** controller-runtime's result label of a Converge result: terminal and dropped runs are errors. */
const RESULT: Readonly<Record<ReconcileResultLabel, string>> = {
  success: 'success',
  error: 'error',
  terminal: 'error',
  dropped: 'error',
  requeue: 'requeue',
  requeue_after: 'requeue_after',
};

/** The controller and work queue metrics of one registry, and the controllers they observe. */
export class ControllerCollectors {
  readonly #controllers: InstrumentableController[] = [];
  readonly #total: FastCounter;
  readonly #errors: FastCounter;
  readonly #terminal: FastCounter;
  readonly #panics: FastCounter;
  readonly #time: FastHistogram;
  readonly #timeouts: FastCounter;
  /** Reconciles running now, by controller (a plain number per event; the gauge reads it on scrape). */
  readonly #active = new Map<string, { value: number }>();
  readonly #dropped: FastCounter;
  readonly #causes: FastCounter;
  readonly #selfCaused: FastCounter;
  readonly #kindTotal: FastCounter;
  readonly #kindTime: FastHistogram;
  readonly #kinds: Gauge<'controller'>;
  readonly #kindSync: FastHistogram;
  readonly #kindEvents: FastCounter;
  readonly #adds: FastCounter;
  readonly #queueDuration: FastHistogram;
  readonly #workDuration: FastHistogram;
  readonly #retries: FastCounter;
  readonly #eventLatency: FastHistogram;

  constructor(registry: Registry) {
    const registers = [registry];
    const controllers = (): readonly InstrumentableController[] => this.#controllers;
    this.#total = new FastCounter(
      registry,
      Names.reconcileTotal,
      'Total number of reconciliations per controller',
      ['controller', 'result'],
    );
    this.#errors = new FastCounter(
      registry,
      Names.reconcileErrors,
      'Total number of reconciliation errors per controller',
      ['controller'],
    );
    this.#terminal = new FastCounter(
      registry,
      Names.terminalErrors,
      'Total number of terminal reconciliation errors per controller',
      ['controller'],
    );
    this.#panics = new FastCounter(
      registry,
      Names.panics,
      'Total number of reconciliation panics per controller (non-Error throws, invalid results, language errors of a bug)',
      ['controller'],
    );
    this.#time = new FastHistogram(
      registry,
      Names.reconcileTime,
      'Length of time per reconciliation per controller',
      ['controller'],
      RECONCILE_TIME_BUCKETS,
    );
    this.#timeouts = new FastCounter(
      registry,
      Names.timeouts,
      'Total number of reconciliation timeouts per controller',
      ['controller'],
    );
    new Gauge({
      name: Names.maxConcurrent,
      help: 'Maximum number of concurrent reconciles per controller',
      labelNames: ['controller'],
      registers,
      collect() {
        for (const c of controllers()) this.labels(c.name).set(c.maxConcurrentReconciles);
      },
    });
    const active = this.#active;
    new Gauge({
      name: Names.activeWorkers,
      help: 'Number of currently used workers per controller',
      labelNames: ['controller'],
      registers,
      collect() {
        for (const [name, state] of active) this.labels(name).set(state.value);
      },
    });
    this.#dropped = new FastCounter(
      registry,
      Names.dropped,
      'Requests dropped after their retry policy gave up (retries exhausted), per controller',
      ['controller'],
    );
    this.#causes = new FastCounter(
      registry,
      Names.causes,
      'Causes of reconciles (why they ran: added, modified, deleted, generic, resync, requeue-after, requeue, retry, manual), per controller',
      ['controller', 'type'],
    );
    this.#selfCaused = new FastCounter(
      registry,
      Names.selfCaused,
      "Reconciles every cause of which echoed a write of the key's own chain (its own reconciles, or ones they caused), per controller",
      ['controller'],
    );
    new Gauge({
      name: Names.hotLoopKeys,
      help: 'Keys flagged as hot loops now (10 self-caused reconciles in a row within 30 s, by default), per controller',
      labelNames: ['controller'],
      registers,
      collect() {
        for (const c of controllers()) this.labels(c.name).set(c.hotLoopKeys?.() ?? 0);
      },
    });
    this.#kindTotal = new FastCounter(
      registry,
      Names.kindReconcileTotal,
      'Total number of reconciliations per controller and kind (group/version/resource), for controllers of several kinds',
      ['controller', 'kind', 'result'],
    );
    this.#kindTime = new FastHistogram(
      registry,
      Names.kindReconcileTime,
      'Length of time per reconciliation per controller and kind',
      ['controller', 'kind'],
      RECONCILE_TIME_BUCKETS,
    );
    this.#kinds = new Gauge({
      name: Names.kinds,
      help: 'Kinds a dynamic controller serves now',
      labelNames: ['controller'],
      registers,
    });
    this.#kindSync = new FastHistogram(
      registry,
      Names.kindSync,
      'Time from serving a kind to its cache being synced, per dynamic controller and kind',
      ['controller', 'kind'],
      LIST_BUCKETS,
    );
    this.#kindEvents = new FastCounter(
      registry,
      Names.kindEvents,
      'Informer events seen by a dynamic controller, per kind and type; enqueued="false" when the generation filter dropped them',
      ['controller', 'kind', 'type', 'enqueued'],
    );
    new Gauge({
      name: Names.depth,
      help: 'Current depth of workqueue',
      labelNames: ['name', 'controller', 'priority'],
      registers,
      collect() {
        this.reset();
        for (const c of controllers()) {
          const levels = c.queueGauges().depthByPriority;
          if (levels.length === 0) this.labels(c.name, c.name, '0').set(0);
          for (const { priority, size } of levels) this.labels(c.name, c.name, String(priority)).set(size);
        }
      },
    });
    this.#adds = new FastCounter(registry, Names.adds, 'Total number of adds handled by workqueue', [
      'name',
      'controller',
    ]);
    this.#queueDuration = new FastHistogram(
      registry,
      Names.queueDuration,
      'How long in seconds an item stays in workqueue before being requested',
      ['name', 'controller'],
      WORKQUEUE_BUCKETS,
    );
    this.#workDuration = new FastHistogram(
      registry,
      Names.workDuration,
      'How long in seconds processing an item from workqueue takes.',
      ['name', 'controller'],
      WORKQUEUE_BUCKETS,
    );
    new Gauge({
      name: Names.unfinished,
      help: "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
      labelNames: ['name', 'controller'],
      registers,
      collect() {
        for (const c of controllers())
          this.labels(c.name, c.name).set(c.queueGauges().unfinishedWorkMs / 1000);
      },
    });
    new Gauge({
      name: Names.longestRunning,
      help: 'How many seconds has the longest running processor for workqueue been running.',
      labelNames: ['name', 'controller'],
      registers,
      collect() {
        for (const c of controllers())
          this.labels(c.name, c.name).set(c.queueGauges().longestRunningMs / 1000);
      },
    });
    this.#retries = new FastCounter(registry, Names.retries, 'Total number of retries handled by workqueue', [
      'name',
      'controller',
    ]);
    this.#eventLatency = new FastHistogram(
      registry,
      Names.eventLatency,
      'Seconds from the first watch event that caused a key (since its previous reconcile) to the start of its reconcile',
      ['name', 'controller'],
      EVENT_LATENCY_BUCKETS,
    );
  }

  /** The controllers observed, in the order they were instrumented. */
  get controllers(): readonly InstrumentableController[] {
    return this.#controllers;
  }

  /** Starts observing a controller: its hooks update the metrics, its gauges are read on scrape. */
  add(controller: InstrumentableController): void {
    if (this.#controllers.includes(controller)) return;
    this.#controllers.push(controller);
    controller.observe({
      metrics: this.#controllerHooks(controller.name),
      queueMetrics: this.#queueHooks(controller.name),
    });
  }

  #controllerHooks(name: string): ControllerHooks & DynamicControllerMetrics {
    const results = new Map<string, CounterChild>();
    const resultOf = (label: string): CounterChild => {
      let child = results.get(label);
      if (child === undefined) {
        child = this.#total.labels(name, label);
        results.set(label, child);
      }
      return child;
    };
    for (const label of ['success', 'error', 'requeue', 'requeue_after']) resultOf(label);
    const time = this.#time.labels(name);
    const errors = this.#errors.labels(name);
    const terminal = this.#terminal.labels(name);
    const panics = this.#panics.labels(name);
    const timeouts = this.#timeouts.labels(name);
    const dropped = this.#dropped.labels(name);
    const selfCaused = this.#selfCaused.labels(name);
    selfCaused.inc(0);
    let active = this.#active.get(name);
    if (active === undefined) {
      active = { value: 0 };
      this.#active.set(name, active);
    }
    const workers = active;
    const causes = new Map<CauseType, CounterChild>();
    const kinds = new Map<
      string,
      { readonly results: Map<string, CounterChild>; readonly time: HistogramChild }
    >();
    return {
      onReconcile: (_controller, result, durationMs, kind, set) => {
        const label = RESULT[result] ?? 'error';
        resultOf(label).inc();
        time.observe(durationMs / 1000);
        if (result === 'dropped') dropped.inc();
        if (kind !== undefined) {
          let perKind = kinds.get(kind);
          if (perKind === undefined) {
            perKind = { results: new Map(), time: this.#kindTime.labels(name, kind) };
            kinds.set(kind, perKind);
          }
          let total = perKind.results.get(label);
          if (total === undefined) {
            total = this.#kindTotal.labels(name, kind, label);
            perKind.results.set(label, total);
          }
          total.inc();
          perKind.time.observe(durationMs / 1000);
        }
        if (set !== undefined) {
          for (const cause of set.causes) {
            let child = causes.get(cause.type);
            if (child === undefined) {
              child = this.#causes.labels(name, cause.type);
              causes.set(cause.type, child);
            }
            child.inc();
          }
        }
      },
      onReconcileError: (_controller, error, detail) => {
        errors.inc();
        if (detail.result === 'terminal') terminal.inc();
        if (detail.timedOut) timeouts.inc();
        if (isPanic(error)) panics.inc();
      },
      onSelfCausedReconcile: () => selfCaused.inc(),
      onActiveWorkers: (_controller, n) => {
        workers.value = n;
      },
      onKinds: (_controller, count) => this.#kinds.labels(name).set(count),
      onKindSynced: (_controller, kind, durationMs) =>
        this.#kindSync.labels(name, kind).observe(durationMs / 1000),
      onEvent: (_controller, kind, type, enqueued) =>
        this.#kindEvents.labels(name, kind, type, String(enqueued)).inc(),
    };
  }

  /** Work queue hooks for a queue named `name` that is not a controller's (no gauges, no keys view). */
  queueHooks(name: string): WorkQueueMetrics {
    return this.#queueHooks(name);
  }

  #queueHooks(name: string): WorkQueueMetrics {
    const adds = this.#adds.labels(name, name);
    const queueDuration = this.#queueDuration.labels(name, name);
    const workDuration = this.#workDuration.labels(name, name);
    const retries = this.#retries.labels(name, name);
    const eventLatency = this.#eventLatency.labels(name, name);
    adds.inc(0);
    retries.inc(0);
    return {
      onAdd: () => adds.inc(),
      onQueueLatency: (_queue, ms) => queueDuration.observe(ms / 1000),
      onWorkDuration: (_queue, ms) => workDuration.observe(ms / 1000),
      onRetry: () => retries.inc(),
      onEventLatency: (_queue, ms) => eventLatency.observe(ms / 1000),
    };
  }
}
