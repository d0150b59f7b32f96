/**
 * `--metrics-bind-address` and `--health-probe-bind-address` of `converge run` and `converge dev`
 * (controller-runtime's flag names), with `CONVERGE_METRICS_BIND_ADDRESS` and
 * `CONVERGE_HEALTH_PROBE_BIND_ADDRESS` as defaults (a flag wins over its variable), and
 * `--dashboard` (the live dashboard at `/` of the metrics address: on in `dev`, a flag for `run`).
 */
import { parseBindAddress } from '@converge/metrics/bind-address';
import { quote, UsageError } from './errors.ts';

export const METRICS_BIND_ADDRESS_ENV = 'CONVERGE_METRICS_BIND_ADDRESS';
export const HEALTH_PROBE_BIND_ADDRESS_ENV = 'CONVERGE_HEALTH_PROBE_BIND_ADDRESS';

export interface OperationsArgs {
  /** Where `/metrics` and `/debug/keys` are served; `0`: not served. */
  readonly metricsBindAddress: string;
  /** Where `/healthz` and `/readyz` are served; `0`: not served. */
  readonly healthProbeBindAddress: string;
  /**
   * Serve the live dashboard at `/` (and `/debug/events`) of the metrics address. Undefined: on
   * (what `converge dev` gets); `converge run` sets it from `--dashboard`.
   */
  readonly dashboard?: boolean;
}

/**
 * `converge run`: the defaults of kubebuilder's `main.go` scaffold: metrics off (`0`; a Deployment
 * turns them on with `--metrics-bind-address=:8080`), probes on `:8081`, so the probes of a
 * Deployment written for a controller-runtime operator fit.
 */
export const RUN_OPERATIONS_DEFAULTS: OperationsArgs = {
  metricsBindAddress: '0',
  healthProbeBindAddress: ':8081',
  dashboard: false,
};

/**
 * `converge dev`: free ports on loopback (printed at start), as the API server's own port: two dev
 * processes, or a dev beside anything on 8080, never collide.
 */
export const DEV_OPERATIONS_DEFAULTS: OperationsArgs = {
  metricsBindAddress: '127.0.0.1:0',
  healthProbeBindAddress: '127.0.0.1:0',
  dashboard: true,
};

/** The option specs to spread into a command's. */
export const OPERATIONS_SPECS = {
  'metrics-bind-address': { type: 'string', value: "ADDRESS, such as ':8080', or '0' to disable" },
  'health-probe-bind-address': { type: 'string', value: "ADDRESS, such as ':8081', or '0' to disable" },
  dashboard: { type: 'boolean' },
} as const;

/** Lines for a command's help. */
export function operationsHelp(defaults: OperationsArgs): string {
  return `  --metrics-bind-address ADDRESS
                           Serve /metrics (Prometheus, controller-runtime's metric names) and
                           /debug/keys on ADDRESS: :PORT, HOST:PORT, [IPV6]:PORT, port 0 for a free
                           one, or 0 to disable (default: $${METRICS_BIND_ADDRESS_ENV},
                           else ${defaults.metricsBindAddress})
  --health-probe-bind-address ADDRESS
                           Serve /healthz and /readyz on ADDRESS (default:
                           $${HEALTH_PROBE_BIND_ADDRESS_ENV}, else ${defaults.healthProbeBindAddress})
  --dashboard              Serve a live dashboard (controllers, queues, keys and their causes,
                           errors, hot loops) at / of the metrics address${defaults.dashboard === true ? ' (on in dev)' : ''}`;
}

/** The operations flags of `command`, checked: a flag, else its variable, else the default. */
export function operationsArgsOf(
  command: string,
  values: {
    readonly 'metrics-bind-address'?: string | undefined;
    readonly 'health-probe-bind-address'?: string | undefined;
    readonly dashboard?: boolean | undefined;
  },
  env: Readonly<Record<string, string | undefined>>,
  defaults: OperationsArgs,
): OperationsArgs {
  const metricsBindAddress = address(
    command,
    '--metrics-bind-address',
    values['metrics-bind-address'],
    METRICS_BIND_ADDRESS_ENV,
    env,
    defaults.metricsBindAddress,
  );
  if (values.dashboard === true && metricsBindAddress === '0')
    throw new UsageError(
      command,
      `--dashboard is served at the metrics address, which is off; give --metrics-bind-address too (such as 127.0.0.1:8080)`,
    );
  return {
    metricsBindAddress,
    healthProbeBindAddress: address(
      command,
      '--health-probe-bind-address',
      values['health-probe-bind-address'],
      HEALTH_PROBE_BIND_ADDRESS_ENV,
      env,
      defaults.healthProbeBindAddress,
    ),
    dashboard: values.dashboard ?? defaults.dashboard ?? true,
  };
}

/**
 * `converge dev`: an operations address on the API server's own port (when both are fixed) would
 * fail at start; say so before anything starts.
 */
export function checkApiServerPort(command: string, args: OperationsArgs, apiPort: number): void {
  if (apiPort === 0) return;
  for (const [flag, value] of [
    ['--metrics-bind-address', args.metricsBindAddress],
    ['--health-probe-bind-address', args.healthProbeBindAddress],
  ] as const) {
    if (parseBindAddress(flag, value)?.port === apiPort)
      throw new UsageError(
        command,
        `${flag} ${quote(value)} uses port ${apiPort}, the API server's --port; choose another port`,
      );
  }
}

function address(
  command: string,
  flag: string,
  value: string | undefined,
  variable: string,
  env: Readonly<Record<string, string | undefined>>,
  fallback: string,
): string {
  const fromEnv = env[variable]?.trim();
  const [where, raw] =
    value !== undefined
      ? [flag, value]
      : fromEnv === undefined || fromEnv === ''
        ? [undefined, fallback]
        : [`$${variable}`, fromEnv];
  try {
    parseBindAddress(flag, raw);
  } catch {
    throw new UsageError(
      command,
      `${where ?? flag} must be an address such as ':8080', '127.0.0.1:8080', '[::1]:8080', or '0' to disable, got ${quote(raw)}`,
    );
  }
  return raw;
}
