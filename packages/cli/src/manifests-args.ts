/**
 * The command line of `converge manifests [MODULE…]`: flags checked here (names as the API server
 * checks them) so a usage error comes before any module is imported or file touched.
 */
import { quote, UsageError } from './errors.ts';
import { type OptionSpecs, parseOptions, shardByOption } from './options.ts';

/** `converge manifests …`, parsed. Undefined fields take their defaults from package.json. */
export interface ManifestsArgs {
  /** Operator modules (default: package.json `converge.module`, else src/operator.ts). */
  readonly modules: readonly string[];
  /** Where the YAML goes (default config). */
  readonly out: string;
  readonly name: string | undefined;
  readonly namespace: string | undefined;
  readonly image: string | undefined;
  /** Write nothing; exit 1 listing the files that differ. */
  readonly check: boolean;
  /** Also a Helm chart in chart/. */
  readonly helm: boolean;
  /** Rewrite the Dockerfile and .dockerignore even if they exist. */
  readonly force: boolean;
  /** Run without --leader-elect (one replica, no Lease, no leader-election Role). */
  readonly leaderElection: boolean;
  /**
   * With leader election: the ValidatingAdmissionPolicy fencing the leader's writes (default on;
   * off with a shard group, whose every member writes).
   */
  readonly fencingPolicy: boolean;
  /** `--shard-group`: the replicas share the keys as members of this group (elastic sharding). */
  readonly shardGroup?: string | undefined;
  /** `--shard-by`: with `--shard-group`, how the group splits keys (converge run --shard-by). */
  readonly shardBy?: 'key' | 'uid' | undefined;
  /** `--replicas` (default: 2 with a shard group, else 1). */
  readonly replicas?: number | undefined;
}

export const MANIFESTS_HELP = `Usage: converge manifests [MODULE…] [options]

Generates the deploy artefacts of an operator from its wiring: the modules are imported and wired
into a manager that never starts (nothing is contacted), and what they watch, own, read and declare
with manager.permissions.require(...) becomes its RBAC; their defineKind kinds become CRDs.

Writes, under --out: namespace.yaml, crd/<plural>.<group>.yaml, rbac/ (ServiceAccount, ClusterRole
and Roles with their bindings, leader election Role), policy/leader_fencing.yaml (a
ValidatingAdmissionPolicy, Kubernetes 1.30 or later, refusing writes of the operator's pods that do
not hold the leader Lease; not with --shard-group), manager/ (Deployment running converge run with
--leader-elect and the pod's name as --identity, probes on :8081, metrics on :8080, and a metrics
Service), and kustomization.yaml (kubectl apply -k DIR). In the working directory: a Dockerfile and
.dockerignore when there are none. Every YAML file says it is generated; edit the module instead.

Options:
  --out DIR                Where the YAML goes (default config)
  --name NAME              The operator's name: ServiceAccount, Deployment, roles (default: the
                           package.json name without its scope)
  --namespace NS           Where the operator runs (default NAME-system)
  --image IMAGE            The Deployment's image (default NAME:VERSION, package.json's version;
                           NAME:latest without one)
  --check                  Write nothing; exit 1 listing each file that differs from what the
                           modules generate (CRDs that drifted from their TypeScript kinds, RBAC
                           that no longer matches the wiring). For CI.
  --helm                   Also write a Helm chart to chart/ (CRDs in chart/crds/)
  --no-leader-elect        Run one replica without leader election (no Lease, no Role for it)
  --no-fencing-policy      Leave out the policy that refuses writes of pods not holding the Lease
                           (for replicas that write without leading: sharded controllers, runnables
                           with needLeaderElection: false; see docs/guide/fencing.md)
  --shard-group NAME       Run the replicas as members of this shard group (converge run
                           --shard-group; a DNS label): they share the keys, each on a Lease
                           NAME.<pod> in the namespace, with a Role for those Leases (merged into
                           the leader election Role). Leaves out the leader fencing policy: every
                           member writes, and it would refuse all but the leader's writes
  --shard-by key|uid       With --shard-group: how the replicas split the keys (converge run
                           --shard-by; uid: each lists and watches only its uid slots)
  --replicas N             The Deployment's replicas (default 2 with --shard-group, else 1; more
                           than 1 needs leader election or --shard-group)
  --force                  Rewrite the Dockerfile and .dockerignore even if they exist
  -h, --help               Show this help

Defaults for MODULE, NAME: package.json's "converge": { "module": "src/operator.ts" } (else
src/operator.ts or operator.ts, the first that exists) and "name".`;

const SPECS = {
  out: { type: 'string', value: 'DIR' },
  name: { type: 'string', value: 'NAME, a DNS label' },
  namespace: { type: 'string', value: 'NS, a DNS label' },
  image: { type: 'string', value: 'IMAGE' },
  check: { type: 'boolean' },
  helm: { type: 'boolean' },
  force: { type: 'boolean' },
  'no-leader-elect': { type: 'boolean' },
  'no-fencing-policy': { type: 'boolean' },
  'shard-group': { type: 'string', value: 'NAME, a DNS label' },
  'shard-by': { type: 'string', value: 'key|uid' },
  replicas: { type: 'string', value: 'N' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionSpecs;

const DNS_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const IMAGE = /^[a-z0-9][a-z0-9._\-/:@]*$/i;

function usage(problem: string): UsageError {
  return new UsageError('manifests', problem);
}

/** Parses `converge manifests …` (argv after `manifests`); throws a UsageError naming what is wrong. */
export function parseManifests(args: readonly string[]): ManifestsArgs | { readonly help: true } {
  const { values, positionals, help } = parseOptions('manifests', args, SPECS);
  if (help) return { help: true };
  const { name, namespace, image } = values;
  if (name !== undefined && (name.length > 40 || !DNS_LABEL.test(name)))
    throw usage(
      `--name must be a DNS label starting with a letter (lower-case letters, digits and -, at most 40), got ${quote(name)}`,
    );
  if (
    namespace !== undefined &&
    (namespace.length > 63 || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(namespace))
  )
    throw usage(
      `--namespace must be a DNS label (lower-case letters, digits and -, at most 63), got ${quote(namespace)}`,
    );
  if (image !== undefined && (image.length > 255 || !IMAGE.test(image)))
    throw usage(`--image must be an image reference such as registry.example.com/op:v1, got ${quote(image)}`);
  for (const module of positionals) {
    if (!/\.(ts|mts|js|mjs)$/.test(module))
      throw usage(`a module is a .ts or .js file, got ${quote(module)}`);
  }
  const shardGroup = values['shard-group'];
  if (
    shardGroup !== undefined &&
    (shardGroup.length > 63 || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(shardGroup))
  )
    throw usage(
      `--shard-group must be a DNS label (lower-case letters, digits and '-', at most 63), got ${quote(shardGroup)}`,
    );
  const shardBy = shardByOption(
    'manifests',
    values['shard-by'],
    shardGroup === undefined ? '--shard-group' : undefined,
  );
  const replicas = values.replicas === undefined ? undefined : replicasOf(values.replicas);
  if (
    replicas !== undefined &&
    replicas > 1 &&
    values['no-leader-elect'] === true &&
    shardGroup === undefined
  )
    throw usage(
      `--replicas ${replicas} with --no-leader-elect and no --shard-group would run every key on every replica; add --shard-group NAME or drop --no-leader-elect`,
    );
  if (values.check === true && values.force === true)
    throw usage('--check writes nothing; --force has nothing to rewrite');
  return {
    modules: positionals,
    out: values.out ?? 'config',
    name,
    namespace,
    image,
    check: values.check ?? false,
    helm: values.helm ?? false,
    force: values.force ?? false,
    leaderElection: values['no-leader-elect'] !== true,
    // A shard group's members all write: the leader fencing policy would refuse all but one.
    fencingPolicy:
      values['no-leader-elect'] !== true && values['no-fencing-policy'] !== true && shardGroup === undefined,
    shardGroup,
    shardBy,
    replicas,
  };
}

/** `--replicas N`: a whole number from 1 to 1000 (the limit generateManifests takes). */
function replicasOf(text: string): number {
  const n = /^[0-9]{1,4}$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= 1 && n <= 1000))
    throw usage(`--replicas must be a whole number from 1 to 1000, got ${quote(text)}`);
  return n;
}
