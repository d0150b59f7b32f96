import { OptionsError } from '@converge/runtime';

/** Container resource requests and limits (`cpu: '100m'`, `memory: '128Mi'`). */
export interface ManifestResources {
  readonly requests?: Readonly<Record<string, string>>;
  readonly limits?: Readonly<Record<string, string>>;
}

/** Options of {@link generateManifests}; only `name` is required. */
export interface ManifestOptions {
  /** The operator's name: the ServiceAccount, Deployment, roles and labels use it. A DNS label. */
  readonly name: string;
  /** Where the operator runs. Default `<name>-system`. */
  readonly namespace?: string;
  /** The container image. Default `<name>:latest`. */
  readonly image?: string;
  /**
   * The operator modules as paths inside the image, relative to its working directory `/app`
   * (`converge run` loads them). Default `['src/operator.ts']` (Node 24 strips the types).
   */
  readonly modules?: readonly string[];
  /** Run with `--leader-elect` (a Lease in the operator's namespace, and a Role for it). Default true. */
  readonly leaderElection?: boolean;
  /** The Lease's name. Default `<name>-leader`. */
  readonly leaseName?: string;
  /**
   * With leader election: a ValidatingAdmissionPolicy whose param is the Lease, refusing writes of
   * the operator's pods that do not hold it (see `docs/guide/fencing.md`). Default: `leaderElection`.
   * Turn it off for an operator whose replicas write without leading (sharded controllers,
   * runnables with `needLeaderElection: false`). Never with `shardGroup`: every member of a shard
   * group writes, and the policy would refuse all but the leader's writes (default false there;
   * true is an OptionsError).
   */
  readonly fencingPolicy?: boolean;
  /**
   * Run the replicas as members of this shard group (`converge run --shard-group`): they share the
   * controllers' keys, each announcing itself on a Lease `<group>.<pod>` in the operator's
   * namespace; a Role grants the Lease verbs membership uses (merged into the leader-election Role
   * when both are on). A DNS label. Default none: not sharded.
   */
  readonly shardGroup?: string;
  /**
   * With `shardGroup`: how the group splits keys (`converge run --shard-by`) — `'key'` (default)
   * or `'uid'` (each replica lists and watches only its uid slots).
   */
  readonly shardBy?: 'key' | 'uid';
  /** The metrics port (`/metrics`, named `metrics`). Default 8080. */
  readonly metricsPort?: number;
  /** The probes' port (`/healthz`, `/readyz`). Default 8081. */
  readonly probePort?: number;
  /**
   * Replicas of the Deployment. Default 2 with `shardGroup` (members share the keys), else 1
   * (more are standbys with leader election).
   */
  readonly replicas?: number;
  /** Grant creating Events in every namespace (the event recorder's). Default true. */
  readonly events?: boolean;
  /** A Service for the metrics port. Default true. */
  readonly metricsService?: boolean;
  /** Default: requests 10m CPU and 64Mi, limits 500m CPU and 512Mi. */
  readonly resources?: ManifestResources;
  /** The Helm chart's version. Default `0.1.0`. */
  readonly chartVersion?: string;
  /**
   * Serve the operator's webhooks in managed mode (`converge run --webhook-service`): a webhook
   * port, a Service for it, and the RBAC managed mode needs (its Secret, the webhook
   * configurations, CRD conversions). Default: whether the manager has webhook registrations.
   */
  readonly webhooks?: boolean;
  /** The webhook server's container port. Default 9443. */
  readonly webhookPort?: number;
  /**
   * Files or folders inside the project that `npm ci` needs before it runs: the tarballs of
   * `file:` dependencies (`vendor/`). The Dockerfile copies them into the build stage. Default none.
   */
  readonly localPackages?: readonly string[];
}

/** {@link ManifestOptions} with every default filled in. */
export interface ResolvedManifestOptions {
  readonly name: string;
  readonly namespace: string;
  readonly image: string;
  readonly modules: readonly string[];
  readonly leaderElection: boolean;
  readonly leaseName: string;
  readonly fencingPolicy: boolean;
  readonly shardGroup: string | undefined;
  readonly shardBy: 'key' | 'uid';
  readonly metricsPort: number;
  readonly probePort: number;
  readonly replicas: number;
  readonly events: boolean;
  readonly metricsService: boolean;
  readonly resources: ManifestResources;
  readonly chartVersion: string;
  readonly webhooks: boolean;
  readonly webhookPort: number;
  readonly localPackages: readonly string[];
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** An image reference: registry/path:tag or @digest, without spaces or quotes. */
const IMAGE = /^[a-z0-9][a-z0-9._\-/:@]*$/i;
/** A path inside the image: relative, no `..`, no spaces or characters a shell or YAML would mangle. */
const MODULE = /^(?!\/)(?!.*(^|\/)\.\.(\/|$))[\w.\-/@]+\.(ts|mts|js|mjs)$/;
/** A file or folder inside the project, as MODULE without the extension rule. */
const PROJECT_PATH = /^(?!\/)(?!\.\/)(?!.*(^|\/)\.\.?(\/|$))[\w.\-/@]+$/;
const QUANTITY = /^[0-9]+(\.[0-9]+)?(m|k|Ki|Mi|Gi|Ti|M|G|T)?$/;
const SEMVER = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/;

export const DEFAULT_RESOURCES: ManifestResources = {
  requests: { cpu: '10m', memory: '64Mi' },
  limits: { cpu: '500m', memory: '512Mi' },
};

function label(field: string, value: unknown, max = 63): string {
  if (typeof value !== 'string' || value.length > max || !DNS_LABEL.test(value))
    throw new OptionsError(field, value, `a DNS label (lower-case letters, digits and -, at most ${max})`);
  return value;
}

function port(field: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 65_535)
    throw new OptionsError(field, value, 'a port number (1-65535)');
  return value;
}

function bool(field: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new OptionsError(field, value, 'true or false');
  return value;
}

function resources(value: unknown): ManifestResources {
  if (value === undefined) return DEFAULT_RESOURCES;
  if (typeof value !== 'object' || value === null)
    throw new OptionsError('resources', value, 'an object with requests and limits');
  const out: Record<string, Record<string, string>> = {};
  for (const [key, map] of Object.entries(value)) {
    if (key !== 'requests' && key !== 'limits')
      throw new OptionsError(`resources.${key}`, map, 'only requests and limits');
    if (typeof map !== 'object' || map === null)
      throw new OptionsError(`resources.${key}`, map, 'an object of quantities');
    const checked: Record<string, string> = {};
    for (const name of Object.keys(map).sort()) {
      const quantity = (map as Record<string, unknown>)[name];
      if (!/^[a-z][-a-z0-9./]*$/.test(name) || typeof quantity !== 'string' || !QUANTITY.test(quantity))
        throw new OptionsError(`resources.${key}.${name}`, quantity, 'a quantity such as 100m or 128Mi');
      checked[name] = quantity;
    }
    out[key] = checked;
  }
  return out;
}

/** Checks `options` and fills in the defaults; throws an OptionsError naming the first bad field. */
export function resolveManifestOptions(
  options: ManifestOptions,
  hasWebhooks = false,
): ResolvedManifestOptions {
  if (typeof options !== 'object' || options === null)
    throw new OptionsError('options', options, 'an object with at least a name');
  // Names of objects get suffixes (-metrics): keep room for them; a Service name starts with a letter.
  const name = label('name', options.name, 40);
  if (!/^[a-z]/.test(name)) throw new OptionsError('name', name, 'a DNS label starting with a letter');
  const namespace = label('namespace', options.namespace ?? `${name}-system`);
  const image = options.image ?? `${name}:latest`;
  if (typeof image !== 'string' || image.length > 255 || !IMAGE.test(image))
    throw new OptionsError('image', image, 'an image reference such as registry.example.com/op:v1');
  const modules = options.modules ?? ['src/operator.ts'];
  if (!Array.isArray(modules) || modules.length === 0)
    throw new OptionsError('modules', modules, 'a non-empty array of module paths');
  for (const module of modules) {
    if (typeof module !== 'string' || module.length > 255 || !MODULE.test(module))
      throw new OptionsError(
        'modules',
        module,
        'a relative path inside the image ending in .ts or .js, without .. or spaces',
      );
  }
  const shardGroup = options.shardGroup === undefined ? undefined : label('shardGroup', options.shardGroup);
  const shardBy = options.shardBy ?? 'key';
  if (shardBy !== 'key' && shardBy !== 'uid') throw new OptionsError('shardBy', shardBy, "'key' or 'uid'");
  if (shardBy === 'uid' && shardGroup === undefined)
    throw new OptionsError('shardBy', shardBy, 'used with a shardGroup');
  const replicas = options.replicas ?? (shardGroup === undefined ? 1 : 2);
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0 || replicas > 1000)
    throw new OptionsError('replicas', replicas, 'a whole number from 0 to 1000');
  const metricsPort = port('metricsPort', options.metricsPort, 8080);
  const probePort = port('probePort', options.probePort, 8081);
  if (metricsPort === probePort)
    throw new OptionsError('probePort', probePort, 'a port other than metricsPort');
  const webhookPort = port('webhookPort', options.webhookPort, 9443);
  if (webhookPort === metricsPort || webhookPort === probePort)
    throw new OptionsError('webhookPort', webhookPort, 'a port other than metricsPort and probePort');
  const localPackages = options.localPackages ?? [];
  if (!Array.isArray(localPackages))
    throw new OptionsError('localPackages', localPackages, 'an array of paths inside the project');
  for (const path of localPackages) {
    if (typeof path !== 'string' || path.length > 255 || !PROJECT_PATH.test(path))
      throw new OptionsError(
        'localPackages',
        path,
        'a relative path inside the project (vendor/pkg.tgz), without ./, .. or spaces',
      );
  }
  const leaderElection = bool('leaderElection', options.leaderElection, true);
  const fencingPolicy = bool(
    'fencingPolicy',
    options.fencingPolicy,
    leaderElection && shardGroup === undefined,
  );
  if (fencingPolicy && !leaderElection)
    throw new OptionsError(
      'fencingPolicy',
      fencingPolicy,
      'false without leader election (its param is the Lease)',
    );
  if (fencingPolicy && shardGroup !== undefined)
    throw new OptionsError(
      'fencingPolicy',
      fencingPolicy,
      "false with a shardGroup (every member writes; the policy would refuse all but the leader's writes)",
    );
  const chartVersion = options.chartVersion ?? '0.1.0';
  if (typeof chartVersion !== 'string' || !SEMVER.test(chartVersion))
    throw new OptionsError('chartVersion', chartVersion, 'a semantic version such as 0.1.0');
  return {
    name,
    namespace,
    image,
    modules: [...modules],
    leaderElection,
    leaseName: label('leaseName', options.leaseName ?? `${name}-leader`),
    fencingPolicy,
    shardGroup,
    shardBy,
    metricsPort,
    probePort,
    replicas,
    events: bool('events', options.events, true),
    metricsService: bool('metricsService', options.metricsService, true),
    resources: resources(options.resources),
    chartVersion,
    webhooks: bool('webhooks', options.webhooks, hasWebhooks),
    webhookPort,
    localPackages: [...new Set(localPackages as readonly string[])].sort(),
  };
}
