import { readFileSync } from 'node:fs';
import { isValidLeaseKey } from '@converge/nats/lease-key';
import { isLoopbackHost } from '@converge/runtime';
import { quote, UsageError } from './errors.ts';
import { IMPORT_HELP, type ImportArgs, parseImport } from './import-args.ts';
import { KV_HELP, type KvArgs, parseKv } from './kv-args.ts';
import { LOG_HELP, LOG_SPECS, type LogArgs, logArgsOf } from './log-args.ts';
import { MANIFESTS_HELP, type ManifestsArgs, parseManifests } from './manifests-args.ts';
import {
  checkApiServerPort,
  DEV_OPERATIONS_DEFAULTS,
  OPERATIONS_SPECS,
  type OperationsArgs,
  operationsArgsOf,
  operationsHelp,
  RUN_OPERATIONS_DEFAULTS,
} from './operations-args.ts';
import { type OptionSpecs, parseOptions, shardByOption, shownFlag } from './options.ts';
import {
  CREATE_HELP,
  type CreateApiArgs,
  INIT_HELP,
  type InitArgs,
  parseCreate,
  parseInit,
} from './scaffold/index.ts';
import { parseSimulate, SIMULATE_HELP, type SimulateArgs } from './simulate-args.ts';
import { parseStore, STORE_HELP, type StoreArgs } from './store-args.ts';
import { webhookArgsOf } from './webhook-args.ts';
import { parseWhy, WHY_HELP, type WhyArgs } from './why-args.ts';

export interface ServeArgs extends LogArgs {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string | undefined;
  readonly kubeconfig: string;
  /** The API token, from `--token`, `--token-file` or `CONVERGE_TOKEN` (undefined: generated). */
  readonly token: string | undefined;
  /** Where the token came from: `--token` is visible to every local user in `ps`, and is warned about. */
  readonly tokenSource: 'flag' | 'file' | 'env' | undefined;
  /** The `--token-file` given, if any. */
  readonly tokenFile: string | undefined;
  readonly insecure: boolean;
  /** `--insecure-bind-non-loopback`: plain HTTP without a token on an address beyond loopback. */
  readonly insecureBindNonLoopback: boolean;
  /** `--reinitialize-store`: start empty when the data dir's store files went missing. */
  readonly reinitializeStore: boolean;
  /** Serve the fault admin endpoint `/converge/faults` (`--fault-admin`; always with `dev`). */
  readonly faultAdmin: boolean;
  /** Its token, from `--fault-admin-token-file` or `CONVERGE_FAULT_ADMIN_TOKEN` (undefined: generated). */
  readonly faultAdminToken: string | undefined;
}

/** The environment variables `serve` and `dev` read. */
export const TOKEN_ENV = 'CONVERGE_TOKEN';
export const FAULT_ADMIN_TOKEN_ENV = 'CONVERGE_FAULT_ADMIN_TOKEN';

/** Where `converge run --leader-elect` keeps its lease: `kubernetes` (a Lease) or `nats` (a KV entry). */
export type LeaseBackend = 'kubernetes' | 'nats';

export interface RunArgs extends LogArgs, OperationsArgs {
  readonly modules: readonly string[];
  readonly kubeconfig: string | undefined;
  readonly context: string | undefined;
  readonly namespace: string | undefined;
  readonly leaderElect: boolean;
  /**
   * `--shard-group`: the replicas share the controllers' keys (elastic sharding) as members of this
   * group, announced on Leases (or NATS KV entries with `--lease-backend nats`).
   */
  readonly shardGroup: string | undefined;
  /** `--shard-by`: how the group splits keys — by request key, or by the primary's uid (each replica caches its share). */
  readonly shardBy: 'key' | 'uid';
  readonly leaseBackend: LeaseBackend;
  /** The Lease's name, or with the NATS backend the KV key (after `<lease namespace>.` if one is given). */
  readonly leaseName: string;
  readonly leaseNamespace: string | undefined;
  /** With the NATS backend: the server (undefined: `NATS_URL`, else the default). */
  readonly nats: string | undefined;
  /**
   * `--nats-backend`: modules get a NATS JetStream KV backend named `nats` on that server
   * (`manager.useBackend('nats', …)`), as `converge dev --nats` gives them.
   */
  readonly natsBackend: boolean;
  /** With the NATS backend: the KV bucket (undefined: the lock's default, `converge-leases`). */
  readonly leaseBucket: string | undefined;
  readonly identity: string | undefined;
  readonly leaseDurationMs: number | undefined;
  readonly renewDeadlineMs: number | undefined;
  readonly retryPeriodMs: number | undefined;
  /** `--webhook-port`: serve registered webhooks on this port (default 9443 when webhooks are served). */
  readonly webhookPort: number | undefined;
  /** `--webhook-cert-dir`: `tls.crt` and `tls.key` of the webhook server. */
  readonly webhookCertDir: string | undefined;
  /** `--webhook-service`: managed mode (certificates and configurations kept by the operator). */
  readonly webhookService:
    | { readonly namespace: string; readonly name: string; readonly port?: number }
    | undefined;
  /** `--webhook-secret`: managed mode's Secret. */
  readonly webhookSecret: string | undefined;
}

export type Command =
  | { readonly command: 'help'; readonly topic?: string }
  | ({ readonly command: 'run' } & RunArgs)
  | { readonly command: 'version' }
  | ({ readonly command: 'serve' } & ServeArgs)
  | ({
      readonly command: 'dev';
      readonly modules: readonly string[];
      /** `--as-service-account`: the operators run as their generated ServiceAccount (see dev-service-account.ts). */
      readonly asServiceAccount: boolean;
      /** `--nats URL`: modules get a NATS JetStream KV backend named `nats` (`manager.useBackend('nats', …)`). */
      readonly nats: string | undefined;
    } & ServeArgs &
      OperationsArgs)
  | ({ readonly command: 'kv' } & KvArgs)
  | ({ readonly command: 'import' } & ImportArgs)
  | ({ readonly command: 'store' } & StoreArgs)
  | ({ readonly command: 'init' } & InitArgs)
  | ({ readonly command: 'create' } & CreateApiArgs)
  | ({ readonly command: 'manifests' } & ManifestsArgs)
  | ({ readonly command: 'simulate' } & SimulateArgs)
  | ({ readonly command: 'why' } & WhyArgs);

export const USAGE = `Usage: converge <command> [options]

Commands:
  serve            Run the embedded Kubernetes API server (kubectl and @kubernetes/client-node work against it)
  dev [module…]    Run the API server and operator modules in one process (default: the bundled examples)
  run module…      Run operator modules against any cluster (a kubeconfig or in-cluster config)
  kv <verb> …      Apply, get or delete objects in NATS JetStream KV (primaries of NATS-backed operators)
  import FILE…     Write defineKind modules (TypeScript types) from CRD YAML files you do not own
  store <verb> …   Check or repair the embedded server's data directory (check, repair)
  init [dir]       Make a new operator project (a kind, its controller and test, deploy files)
  create api …     Add a kind with its controller and test to a project
  manifests        Write deploy artefacts: CRDs, RBAC derived from the wiring, Deployment, kustomize
  simulate FILE    Run a scenario through seeded fault schedules on a virtual clock; replay a seed
  why KIND/NAME    Ask a running operator why an object is reconciled: causes, last error, hot loop
  help [command]   Show help

Run 'converge <command> --help' for a command's options.`;

const SERVE_OPTIONS = `Options:
  --host HOST              Address to bind (default 127.0.0.1)
  --port PORT              Port to listen on; 0 picks a free one (default 0)
  --data-dir DIR           Keep state (objects, certificates, tokens) in DIR (made 0700) so it
                           survives restarts; one process at a time (a second start on DIR
                           fails at once, naming the process that holds it)
  --kubeconfig PATH        Where to write the kubeconfig, mode 0600 (default .converge/kubeconfig)
  --token-file PATH        Read the bearer token clients must send from PATH (default: random;
                           or set $CONVERGE_TOKEN)
  --token TOKEN            The token on the command line: other local users can see it in ps;
                           prefer --token-file or $CONVERGE_TOKEN
  --fault-admin            Serve the fault-injection endpoint /converge/faults, with its own token
                           (written 0600 to fault-admin-token beside the kubeconfig); the
                           kubeconfig's token gets 403 there. Always on with converge dev.
  --fault-admin-token-file PATH
                           Read the fault admin token from PATH (or set
                           $CONVERGE_FAULT_ADMIN_TOKEN) instead of generating one
  --insecure               Plain HTTP and no authentication (debugging only; loopback only)
  --insecure-bind-non-loopback
                           With --insecure, allow a --host beyond loopback: anyone who can reach
                           it can read and change everything, Secrets included
  --reinitialize-store     Start with an empty store when the data dir's store log or snapshot is
                           missing or emptied (leftovers are moved aside); without it converge
                           refuses to start. For damage, see converge store check|repair
${LOG_HELP}`;

const HELP_LINE = '  -h, --help               Show this help';

export const HELP: Record<string, string> = {
  kv: KV_HELP,
  import: IMPORT_HELP,
  store: STORE_HELP,
  init: INIT_HELP,
  manifests: MANIFESTS_HELP,
  simulate: SIMULATE_HELP,
  why: WHY_HELP,
  create: CREATE_HELP,
  run: `Usage: converge run module… [options]

Runs operator modules against a Kubernetes API (a real cluster or converge serve) until SIGINT or
SIGTERM. Exits non-zero if an operator fails or leadership is lost.

Options:
  --kubeconfig PATH        Kubeconfig file (default: $KUBECONFIG, ~/.kube/config, else in-cluster)
  --context NAME           Context to use (default: the current context)
  --namespace NS           Namespace for requests without one (default: the context's)
  --leader-elect           Run controllers only while holding a lease (a coordination.k8s.io/v1
                           Lease, or an entry in NATS JetStream KV with --lease-backend nats)
  --lease-backend KIND     kubernetes (a Lease, the default) or nats (a KV entry; needs no
                           Kubernetes API for the election, nats-server 2.9 or later)
  --lease-name NAME        The Lease's name, or the KV key (default converge-operator)
  --lease-namespace NS     The Lease's namespace (default: --namespace, else default); with nats,
                           if given, the key is NS.NAME
  --nats URL               nats: the server (default: $NATS_URL, else nats://127.0.0.1:4222)
  --lease-bucket BUCKET    nats: the KV bucket, created if missing (default converge-leases)
  --nats-backend           Give the modules a NATS JetStream KV backend named nats on that server:
                           manager.useBackend('nats', [type]) keeps those kinds in its buckets
                           (prefixed with $CONVERGE_NATS_BUCKET_PREFIX, default converge_), as
                           converge dev --nats does; their writes are fenced like the others
  --shard-group NAME       Share the controllers' keys between the replicas of this group (elastic
                           sharding): each member announces itself on a Lease (a KV entry with
                           --lease-backend nats) and reconciles only its keys, handed over without
                           overlap when members come and go; with --leader-elect too, leader-gated
                           runnables still run on the leader only
  --shard-by key|uid       How the group splits the keys (every replica the same): key (default)
                           by each request's namespace/name, every replica caching every object;
                           uid by the primary object's uid in 64 hash slots, each replica listing
                           and watching only its slots (KEP-5866 shardSelector)
  --identity ID            This replica's identity (default: hostname and pid)
  --lease-duration-ms MS   Lease duration (default 15000)
  --renew-deadline-ms MS   Renew deadline (default 10000)
  --retry-period-ms MS     Retry period (default 2000)
  --webhook-port PORT      Serve the modules' webhooks over HTTPS on PORT (default 9443 when
                           --webhook-cert-dir is given)
  --webhook-cert-dir DIR   The webhook server's tls.crt and tls.key, reloaded when they change
                           (default /tmp/k8s-webhook-server/serving-certs when --webhook-port is given)
  --webhook-service NS/NAME[:PORT]
                           Managed webhooks behind this Service: a CA and certificate in a Secret
                           shared by every replica, the webhook configurations and CRD conversions
                           kept pointing at the Service (no cert-manager needed)
  --webhook-secret NAME    The managed certificates' Secret (default NAME-webhook-certs)
${operationsHelp(RUN_OPERATIONS_DEFAULTS)}
${LOG_HELP}
  -h, --help               Show this help`,
  serve: `Usage: converge serve [options]

Serves the Kubernetes API over an in-process versioned store until SIGINT or SIGTERM.
The first line of output is: converge: serving Kubernetes API at URL (kubeconfig: PATH)

${SERVE_OPTIONS}
${HELP_LINE}`,
  dev: `Usage: converge dev [module…] [options]

Serves the Kubernetes API and runs operator modules against it in the same process. A module's
default export is (manager) => void | Promise<void>. With no module, those package.json names
("converge": { "module": "src/operator.ts" }, as converge init writes) run, else the bundled examples.
State is kept in .converge/data unless --data-dir says otherwise. The kumori example keeps its
Applications in NATS JetStream KV ($NATS_URL, default nats://127.0.0.1:4222; buckets prefixed with
$CONVERGE_NATS_BUCKET_PREFIX, default converge_); the poller example converges PostgreSQL roles
and databases to the tables of the schema $CONVERGE_POLLER_SCHEMA (default converge_poller, created
if missing) in the database of $DATABASE_URL or $PGHOST (default 127.0.0.1), $PGPORT, $PGUSER,
$PGPASSWORD, $PGDATABASE. An example whose server does not answer is left out, said so, and the
other examples run.

${SERVE_OPTIONS}
${operationsHelp(DEV_OPERATIONS_DEFAULTS)}
  --nats URL               Connect to NATS JetStream at URL and give the modules a backend
                           named nats: manager.useBackend('nats', [type]) keeps those kinds in
                           its KV buckets (prefixed with $CONVERGE_NATS_BUCKET_PREFIX, default
                           converge_); every other kind stays in the API server
  --as-service-account     Run the operators as the ServiceAccount converge manifests generates
                           for them (its Namespace, CRDs and RBAC applied first; modules default
                           to package.json's converge.module, else src/operator.ts or operator.ts,
                           the first that exists): a missing permission fails with the API
                           server's 403, as in a cluster
${HELP_LINE}`,
};

/** The subcommands, for `converge help <command>`. */
const COMMANDS = [
  'serve',
  'dev',
  'run',
  'kv',
  'import',
  'store',
  'init',
  'create',
  'manifests',
  'simulate',
  'why',
  'help',
  'version',
] as const;

/** The usage text for a usage error of `command` (undefined: the global usage). */
export function usageOf(command: string | undefined): string {
  return command !== undefined && Object.hasOwn(HELP, command) ? (HELP[command] as string) : USAGE;
}

const SERVE_SPECS = {
  host: { type: 'string', value: 'HOST, an address to bind' },
  port: { type: 'string', value: 'PORT, 0-65535' },
  'data-dir': { type: 'string', value: 'DIR' },
  kubeconfig: { type: 'string', value: 'PATH' },
  token: { type: 'string', value: 'TOKEN' },
  'token-file': { type: 'string', value: 'PATH' },
  'fault-admin': { type: 'boolean' },
  'fault-admin-token-file': { type: 'string', value: 'PATH' },
  insecure: { type: 'boolean' },
  'insecure-bind-non-loopback': { type: 'boolean' },
  'reinitialize-store': { type: 'boolean' },
  ...LOG_SPECS,
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionSpecs;

const DEV_SPECS = {
  ...SERVE_SPECS,
  ...OPERATIONS_SPECS,
  'as-service-account': { type: 'boolean' },
  nats: { type: 'string', value: 'URL' },
} as const satisfies OptionSpecs;

const RUN_SPECS = {
  kubeconfig: { type: 'string', value: 'PATH' },
  context: { type: 'string', value: 'NAME' },
  namespace: { type: 'string', value: 'NS' },
  'leader-elect': { type: 'boolean' },
  'lease-name': { type: 'string', value: 'NAME' },
  'lease-namespace': { type: 'string', value: 'NS' },
  'lease-backend': { type: 'string', value: 'kubernetes or nats' },
  nats: { type: 'string', value: 'URL' },
  'nats-backend': { type: 'boolean' },
  'lease-bucket': { type: 'string', value: 'BUCKET' },
  'shard-group': { type: 'string', value: 'NAME' },
  'shard-by': { type: 'string', value: 'key|uid' },
  identity: { type: 'string', value: 'ID' },
  'lease-duration-ms': { type: 'string', value: 'MS' },
  'renew-deadline-ms': { type: 'string', value: 'MS' },
  'retry-period-ms': { type: 'string', value: 'MS' },
  'webhook-port': { type: 'string', value: 'PORT' },
  'webhook-cert-dir': { type: 'string', value: 'DIR' },
  'webhook-service': { type: 'string', value: 'NAMESPACE/NAME[:PORT]' },
  'webhook-secret': { type: 'string', value: 'NAME' },
  ...OPERATIONS_SPECS,
  ...LOG_SPECS,
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionSpecs;

function port(command: string, value: string | undefined): number {
  if (value === undefined) return 0;
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65_535)
    throw new UsageError(command, `--port must be a port number (0-65535), got ${quote(value)}`);
  return Number(value);
}

/**
 * Parses the command line. Throws a {@link UsageError} (one line naming the flag and what it
 * takes; `command` says whose usage to show) on bad input, and nothing else.
 */
export function parseCommand(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>> = process.env,
): Command {
  const [command, ...rest] = argv;
  if (command === undefined) return { command: 'help' };
  switch (command) {
    case 'help':
    case '--help':
    case '-h':
      return parseHelp(rest);
    case 'version':
    case '--version':
      if (rest[0] !== undefined)
        throw new UsageError(undefined, `version takes no arguments, got ${quote(rest[0])}`);
      return { command: 'version' };
    case 'run':
      return parseRun(rest, env);
    case 'kv': {
      const kv = parseKv(rest);
      return 'help' in kv ? { command: 'help', topic: 'kv' } : { command: 'kv', ...kv };
    }
    case 'import': {
      const imported = parseImport(rest);
      return 'help' in imported ? { command: 'help', topic: 'import' } : { command: 'import', ...imported };
    }
    case 'store': {
      const store = parseStore(rest);
      return 'help' in store ? { command: 'help', topic: 'store' } : { command: 'store', ...store };
    }
    case 'init': {
      const init = parseInit(rest);
      return 'help' in init ? { command: 'help', topic: 'init' } : { command: 'init', ...init };
    }
    case 'manifests': {
      const manifests = parseManifests(rest);
      return 'help' in manifests
        ? { command: 'help', topic: 'manifests' }
        : { command: 'manifests', ...manifests };
    }
    case 'simulate': {
      const simulate = parseSimulate(rest);
      return 'help' in simulate
        ? { command: 'help', topic: 'simulate' }
        : { command: 'simulate', ...simulate };
    }
    case 'create': {
      const create = parseCreate(rest);
      return 'help' in create ? { command: 'help', topic: 'create' } : { command: 'create', ...create };
    }
    case 'why': {
      const why = parseWhy(rest);
      return 'help' in why ? { command: 'help', topic: 'why' } : { command: 'why', ...why };
    }
    case 'serve':
    case 'dev':
      return parseServe(command, rest, env);
    default:
      throw new UsageError(
        undefined,
        command.startsWith('-')
          ? `unknown option ${shownFlag(command)} (options come after the command)`
          : `unknown command ${shownFlag(command)}`,
      );
  }
}

function parseHelp(rest: readonly string[]): Command {
  const [topic, extra] = rest;
  if (topic === undefined) return { command: 'help' };
  if (!(COMMANDS as readonly string[]).includes(topic))
    throw new UsageError(undefined, `unknown command ${shownFlag(topic)}`);
  if (extra !== undefined)
    throw new UsageError(undefined, `help takes one command, got also ${quote(extra)}`);
  return { command: 'help', topic };
}

function parseServe(
  command: 'serve' | 'dev',
  rest: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Command {
  const { values, positionals, help } = parseOptions(command, rest, DEV_SPECS);
  if (help) return { command: 'help', topic: command };
  for (const flag of Object.keys(OPERATIONS_SPECS)) {
    if (command === 'serve' && flag in values)
      throw new UsageError(
        command,
        `--${flag} is only used by converge dev and converge run (serve runs no operators)`,
      );
  }
  if (command === 'serve' && values['as-service-account'] !== undefined)
    throw new UsageError(
      command,
      '--as-service-account is only used by converge dev (serve runs no operators)',
    );
  if (command === 'serve' && values.nats !== undefined)
    throw new UsageError(command, '--nats is only used by converge dev (serve runs no operators)');
  if (values.nats !== undefined) checkNatsUrl(command, values.nats);
  const host = values.host ?? '127.0.0.1';
  const insecure = values.insecure ?? false;
  const insecureBindNonLoopback = values['insecure-bind-non-loopback'] ?? false;
  if (insecureBindNonLoopback && !insecure)
    throw new UsageError(command, '--insecure-bind-non-loopback is only used with --insecure');
  if (insecure && !insecureBindNonLoopback && !isLoopbackHost(host)) {
    throw new UsageError(
      command,
      `--insecure on --host ${quote(host)} would serve plain HTTP with no authentication to every machine that can reach it; bind a loopback address (127.0.0.1, ::1, localhost), drop --insecure, or add --insecure-bind-non-loopback if that is really meant`,
    );
  }
  if (values.token !== undefined && values['token-file'] !== undefined)
    throw new UsageError(command, 'give the token once: --token or --token-file, not both');
  if (insecure && (values.token !== undefined || values['token-file'] !== undefined))
    throw new UsageError(command, '--insecure checks no token; drop --token/--token-file or --insecure');
  const faultAdmin = command === 'dev' || values['fault-admin'] === true;
  if (!faultAdmin && values['fault-admin-token-file'] !== undefined)
    throw new UsageError(command, '--fault-admin-token-file is only used with --fault-admin');
  const token = insecure ? { value: undefined, source: undefined } : tokenOf(command, values, env);
  const faultAdminToken = faultAdmin
    ? secretOf(
        command,
        '--fault-admin-token-file',
        values['fault-admin-token-file'],
        FAULT_ADMIN_TOKEN_ENV,
        env,
      )
    : undefined;
  if (faultAdminToken !== undefined && faultAdminToken === token.value)
    throw new UsageError(command, 'the fault admin token must differ from the API token');
  const common: ServeArgs = {
    host,
    port: port(command, values.port),
    dataDir: values['data-dir'] ?? (command === 'dev' ? '.converge/data' : undefined),
    kubeconfig: values.kubeconfig ?? '.converge/kubeconfig',
    token: token.value,
    tokenSource: token.source,
    tokenFile: values['token-file'],
    insecure,
    insecureBindNonLoopback,
    reinitializeStore: values['reinitialize-store'] ?? false,
    faultAdmin,
    faultAdminToken,
    ...logArgsOf(command, values, env),
  };
  if (command === 'serve') {
    if (positionals[0] !== undefined)
      throw new UsageError(
        'serve',
        `unexpected argument ${quote(positionals[0])} (serve takes no modules; converge dev runs modules)`,
      );
    return { command: 'serve', ...common };
  }
  const operations = operationsArgsOf(command, values, env, DEV_OPERATIONS_DEFAULTS);
  checkApiServerPort(command, operations, common.port);
  const asServiceAccount = values['as-service-account'] ?? false;
  if (asServiceAccount && insecure)
    throw new UsageError(command, '--as-service-account needs tokens checked; drop --insecure');
  return {
    command: 'dev',
    modules: positionals,
    asServiceAccount,
    nats: values.nats,
    ...common,
    ...operations,
  };
}

/** A NATS server URL: `nats://`, `tls://`, `ws://` or `wss://` with a host (a comma-separated list of them). */
function checkNatsUrl(command: string, value: string): void {
  for (const part of value.split(',')) {
    let url: URL | undefined;
    try {
      url = new URL(part.trim());
    } catch {
      url = undefined;
    }
    if (url === undefined || !/^(nats|tls|ws|wss):$/.test(url.protocol) || url.hostname === '')
      throw new UsageError(
        command,
        `--nats must be a NATS server URL such as nats://127.0.0.1:4222, got ${quote(value)}`,
      );
  }
}

/** The API token: `--token`, else `--token-file`, else `$CONVERGE_TOKEN`, else none (generated). */
function tokenOf(
  command: string,
  values: { readonly token?: string; readonly 'token-file'?: string },
  env: Readonly<Record<string, string | undefined>>,
): { value: string | undefined; source: ServeArgs['tokenSource'] } {
  if (values.token !== undefined)
    return { value: checkToken(command, '--token', values.token), source: 'flag' };
  const value = secretOf(command, '--token-file', values['token-file'], TOKEN_ENV, env);
  if (value === undefined) return { value, source: undefined };
  return { value, source: values['token-file'] !== undefined ? 'file' : 'env' };
}

/** A secret from a file (its first line, trimmed) or else an environment variable. */
function secretOf(
  command: string,
  flag: string,
  file: string | undefined,
  variable: string,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new UsageError(command, `${flag} ${quote(file)} cannot be read: ${(error as Error).message}`);
    }
    return checkToken(command, `${flag} ${quote(file)}`, text.trim());
  }
  const value = env[variable];
  return value === undefined || value === '' ? undefined : checkToken(command, `$${variable}`, value.trim());
}

function checkToken(command: string, where: string, token: string): string {
  if (!/^[\x21-\x7e]+$/.test(token))
    throw new UsageError(
      command,
      `${where} must hold a token: printable characters without spaces${token === '' ? ', got nothing' : ''}`,
    );
  return token;
}

function ms(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,12}$/.test(value) || Number(value) <= 0)
    throw new UsageError('run', `${flag} must be a positive number of milliseconds, got ${quote(value)}`);
  return Number(value);
}

function parseRun(args: readonly string[], env: Readonly<Record<string, string | undefined>>): Command {
  const { values, positionals, help } = parseOptions('run', args, RUN_SPECS);
  if (help) return { command: 'help', topic: 'run' };
  if (positionals.length === 0)
    throw new UsageError('run', 'at least one operator module is required (converge run module… [options])');
  const leaderElect = values['leader-elect'] ?? false;
  const leaseName = values['lease-name'] ?? 'converge-operator';
  const leaseNamespace = values['lease-namespace'];
  const leaseBackend = values['lease-backend'] ?? 'kubernetes';
  if (leaseBackend !== 'kubernetes' && leaseBackend !== 'nats')
    throw new UsageError('run', `--lease-backend must be kubernetes or nats, got ${quote(leaseBackend)}`);
  const shardGroup = values['shard-group'];
  if (shardGroup !== undefined && !DNS_LABEL.test(shardGroup))
    throw new UsageError(
      'run',
      `--shard-group must be a DNS label (lower-case letters, digits and '-'), got ${quote(shardGroup)}`,
    );
  const shardBy =
    shardByOption('run', values['shard-by'], shardGroup === undefined ? '--shard-group' : undefined) ?? 'key';
  const natsBackend = values['nats-backend'] ?? false;
  for (const flag of ['lease-backend', 'lease-bucket'] as const) {
    if (values[flag] !== undefined && !leaderElect && shardGroup === undefined)
      throw new UsageError('run', `--${flag} is only used with --leader-elect or --shard-group`);
  }
  if (values.nats !== undefined && !natsBackend && !leaderElect && shardGroup === undefined)
    throw new UsageError('run', '--nats is only used with --nats-backend, --leader-elect or --shard-group');
  if (leaseBackend === 'nats') checkNatsLease(leaseName, leaseNamespace, values['lease-bucket']);
  else {
    if (values['lease-bucket'] !== undefined)
      throw new UsageError('run', '--lease-bucket is only used with --lease-backend nats');
    if (values.nats !== undefined && !natsBackend)
      throw new UsageError('run', '--nats is only used with --lease-backend nats or --nats-backend');
  }
  if (values.nats !== undefined) checkNatsUrl('run', values.nats);
  return {
    command: 'run',
    modules: positionals,
    kubeconfig: values.kubeconfig,
    context: values.context,
    namespace: values.namespace,
    leaderElect,
    shardGroup,
    shardBy,
    leaseBackend,
    leaseName,
    leaseNamespace,
    nats: values.nats,
    natsBackend,
    leaseBucket: values['lease-bucket'],
    identity: values.identity,
    leaseDurationMs: ms('--lease-duration-ms', values['lease-duration-ms']),
    renewDeadlineMs: ms('--renew-deadline-ms', values['renew-deadline-ms']),
    retryPeriodMs: ms('--retry-period-ms', values['retry-period-ms']),
    ...webhookArgsOf(values),
    ...operationsArgsOf('run', values, env, RUN_OPERATIONS_DEFAULTS),
    ...logArgsOf('run', values, env),
  };
}

/** A Kubernetes namespace: a DNS label. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** A JetStream KV bucket name. */
const BUCKET = /^[-\w]+$/;

/** Checks, before anything connects, that the NATS lease's key and bucket are ones the lock accepts. */
function checkNatsLease(name: string, namespace: string | undefined, bucket: string | undefined): void {
  if (namespace !== undefined && (namespace.length > 63 || !DNS_LABEL.test(namespace)))
    throw new UsageError(
      'run',
      `--lease-namespace must be a DNS label (lower-case letters, digits and -, at most 63), got ${quote(namespace)}`,
    );
  if (!isValidLeaseKey(name))
    throw new UsageError(
      'run',
      `--lease-name must be a NATS KV key (letters, digits and -/_=., no leading, trailing or double dot, not starting with _kv), got ${quote(name)}`,
    );
  if (bucket !== undefined && !BUCKET.test(bucket))
    throw new UsageError(
      'run',
      `--lease-bucket must be a KV bucket name (letters, digits, - and _), got ${quote(bucket)}`,
    );
}
