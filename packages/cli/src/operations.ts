/**
 * The operations endpoints of `converge run` and `converge dev`: a {@link Metrics} that observes
 * the manager (with `--shard-group`, its shard member: `converge_shard_*` and `sharding` in
 * `/debug/keys`; and its client's writes refused for a stale fence) and every controller the
 * operator modules create, and an {@link OperationsServer} in the manager's `servers` group.
 */
import { type InstrumentableController, Metrics, OperationsServer } from '@converge/metrics';
import {
  type BuilderWatchOptions,
  type ControllerBuilder,
  type Logger,
  Manager,
  type ManagerAddOptions,
  type ManagerOptions,
  type ResourceType,
  type Runnable,
} from '@converge/runtime';
import type { OperationsArgs } from './operations-args.ts';

/** The metrics of each instrumented manager (set once its constructor returned). */
const metricsOf = new WeakMap<Manager, Metrics>();

function isController(runnable: unknown): runnable is InstrumentableController {
  const r = runnable as Partial<InstrumentableController> | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.observe === 'function' &&
    typeof r.inspect === 'function' &&
    typeof r.queueGauges === 'function'
  );
}

/**
 * A manager that instruments every controller added to it: one built with `controller(type)…
 * complete()` (also behind an `onStop` hook), one from `dynamicController()`, and one created by
 * hand and passed to `add`. A manager does not list its controllers; an operator module only gets
 * the manager, so this is where the CLI sees them.
 */
class InstrumentedManager extends Manager {
  override add(
    runnable: Runnable | ((signal: AbortSignal) => Promise<void>),
    options: ManagerAddOptions = {},
  ): void {
    const metrics = metricsOf.get(this);
    if (metrics !== undefined && isController(runnable)) metrics.instrument(runnable);
    super.add(runnable, options);
  }

  override controller(type: ResourceType, options: BuilderWatchOptions = {}): ControllerBuilder {
    const builder = super.controller(type, options);
    const metrics = metricsOf.get(this);
    if (metrics === undefined) return builder;
    const complete = builder.complete.bind(builder);
    builder.complete = (reconciler) => {
      const controller = complete(reconciler);
      metrics.instrument(controller);
      return controller;
    };
    return builder;
  }
}

export interface OperatedManager {
  readonly manager: Manager;
  /** Undefined when both addresses are `0`. */
  readonly server: OperationsServer | undefined;
}

/**
 * The manager of `run` or `dev`, instrumented when metrics are served, with the operations server
 * added (unless both addresses are `0`); the dashboard with the metrics unless `args.dashboard` is
 * false. `leaseName` is the `name` label of
 * `leader_election_master_status`, as controller-runtime's (default `manager`).
 */
export function operatedManager(
  options: ManagerOptions,
  args: OperationsArgs,
  logger: Logger,
  leaseName?: string,
): OperatedManager {
  const metricsOn = args.metricsBindAddress !== '0';
  if (!metricsOn && args.healthProbeBindAddress === '0')
    return { manager: new Manager(options), server: undefined };
  const manager = metricsOn ? new InstrumentedManager(options) : new Manager(options);
  const metrics = metricsOn ? new Metrics() : undefined;
  if (metrics !== undefined) {
    metrics.instrument(manager, leaseName === undefined ? {} : { name: leaseName });
    metricsOf.set(manager, metrics);
  }
  const server = new OperationsServer({
    ...(metrics === undefined ? {} : { metrics }),
    probes: manager,
    metricsBindAddress: args.metricsBindAddress,
    healthProbeBindAddress: args.healthProbeBindAddress,
    dashboard: metrics !== undefined && args.dashboard !== false,
    logger,
  });
  manager.add(server, { group: 'servers', name: 'operations-server' });
  return { manager, server };
}

/**
 * The startup line naming where the endpoints are served, once the server listens (undefined if it
 * stopped or failed first: the manager reports that).
 */
export async function operationsLine(server: OperationsServer | undefined): Promise<string | undefined> {
  if (server === undefined) return 'converge: metrics and health probes not served';
  try {
    await server.whenListening();
  } catch {
    return undefined;
  }
  const metrics = server.url('metrics');
  const health = server.url('health');
  const parts = [
    metrics === undefined
      ? 'metrics not served'
      : `metrics at ${metrics}/metrics (keys at ${metrics}/debug/keys)${server.dashboard ? `, dashboard at ${metrics}/` : ''}`,
    health === undefined
      ? 'health probes not served'
      : `health probes at ${health}/healthz and ${health}/readyz`,
  ];
  return `converge: ${parts.join(', ')}`;
}
