/**
 * Operating an operator: Prometheus metrics, health probes and a per-key debug view.
 *
 * - {@link Metrics} — prom-client metrics in a registry of their own (one per manager, never the
 *   global default): controller-runtime's `controller_runtime_reconcile_*`, `workqueue_*` and
 *   `leader_election_master_status` with its labels, help texts and buckets, so its dashboards and
 *   alerts apply; and Converge's own `converge_*` ones: event-to-reconcile latency, reconcile
 *   causes, retries exhausted, per-kind figures of dynamic controllers, informer list durations,
 *   relists and watch restarts by reason, the age of the newest resourceVersion seen, event-loop
 *   stalls, and for a manager that shards its membership, phase, epoch, ownership changes and
 *   share of the keys, with writes refused for a stale fence. `metrics.instrument(part)` observes
 *   a manager (its informers, leadership, shard member and client), a controller, a dynamic
 *   controller, an informer registry, a client, a shard member or a leader elector. Labels never
 *   carry object names: `controller`, `name`, `kind`, `informer`, `result`, `reason`, `priority`,
 *   `type`, `group` (a shard group), `phase`, `owned`, `fence` (a fence's name).
 * - {@link OperationsServer} — a Runnable serving `/metrics` and `/debug/keys` on
 *   `metricsBindAddress` (default `:8080`) and `/healthz`, `/readyz` on `healthProbeBindAddress`
 *   (default `:8081`), as controller-runtime's manager does; `"0"` disables one. Probes answer as
 *   kube-apiserver's: `?verbose`, `/readyz/<check>`, `[+]name ok` / `[-]name failed: reason`.
 *   With `dashboard: true` it also serves a live dashboard at `/` (Server-Sent Events from
 *   `/debug/events`: controllers, queues, rates, keys with causes, errors and hot loops).
 * - {@link EventLoopMonitor} — a heartbeat on the clock's timers behind the `event-loop` health
 *   check.
 *
 * Errors: {@link ListenFailedError} (`CONVERGE_ERR_METRICS_LISTEN_FAILED`),
 * {@link EventLoopStalledError} (`CONVERGE_ERR_METRICS_EVENT_LOOP_STALLED`).
 *
 * The manager does not list its controllers, so instrument each one you create.
 *
 * @example
 * import { Manager } from '@converge/runtime';
 * import { Metrics, OperationsServer } from '@converge/metrics';
 *
 * const manager = new Manager({ backend });
 * const websites = manager.controller(websiteType).owns(deploymentType).complete(reconcile);
 * const metrics = new Metrics().instrument(manager).instrument(websites);
 * manager.add(
 *   new OperationsServer({ metrics, probes: manager, metricsBindAddress: ':8080', healthProbeBindAddress: ':8081' }),
 *   { group: 'servers' },
 * );
 * await manager.start(signal);
 *
 * @module
 */

export type { InstrumentableController } from './controller-metrics.ts';
export { EventLoopStalledError, ListenFailedError, MetricsErrorCodes } from './errors.ts';
export { EventLoopMonitor, type EventLoopMonitorOptions } from './event-loop.ts';
export type { InstrumentableInformers } from './informer-metrics.ts';
export type { LeadershipSource } from './leader-metrics.ts';
export {
  type Instrumentable,
  type InstrumentableClient,
  type InstrumentableManager,
  type InstrumentOptions,
  Metrics,
  type MetricsOptions,
} from './metrics.ts';
export { Names as MetricNames } from './names.ts';
export { isPanic } from './panic.ts';
export {
  type BindAddress,
  type DashboardController,
  type DashboardKey,
  type DashboardSnapshot,
  type DebugKey,
  type DebugKeys,
  OperationsServer,
  type OperationsServerOptions,
  type ProbeSource,
  parseBindAddress,
} from './server/index.ts';
export type { ShardSource } from './shard-metrics.ts';
