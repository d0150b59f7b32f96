import { OptionsError } from '@converge/runtime';
import { quote, UsageError } from './errors.ts';
import { type TypeOverrides, typeFromArgument } from './kv-types.ts';
import { type OptionSpecs, parseOptions, shownFlag } from './options.ts';

export type KvVerb = 'apply' | 'get' | 'delete';
export type KvOutput = 'table' | 'yaml' | 'json' | 'name';

/** `converge kv <verb> …`, parsed. URL and prefix stay undefined when not given (env, then defaults). */
export interface KvArgs {
  readonly verb: KvVerb;
  /** `-f` files: the objects to apply, get or delete. */
  readonly files: readonly string[];
  /** The TYPE argument of get and delete (`applications.kumori.examples.converge.dev/v1`). */
  readonly resource: string | undefined;
  readonly names: readonly string[];
  readonly namespace: string | undefined;
  readonly allNamespaces: boolean;
  readonly output: KvOutput;
  readonly nats: string | undefined;
  readonly bucketPrefix: string | undefined;
  readonly plural: string | undefined;
  readonly kind: string | undefined;
  readonly clusterScoped: boolean;
}

export const KV_HELP = `Usage: converge kv apply -f FILE… [options]
       converge kv get TYPE [NAME…] [options]      (or: converge kv get -f FILE…)
       converge kv delete TYPE NAME… [options]     (or: converge kv delete -f FILE…)

Reads and writes Kubernetes-shaped objects in NATS JetStream KV, where NATS-backed operators keep
their primaries (one bucket per type: <prefix><group>_<version>_<plural>).

  apply    Creates each document of each file (YAML or JSON, '---' between documents), or
           updates it to the file's content; .status is left to the controller.
  get      Prints objects: a table, or -o yaml|json|name.
  delete   Deletes objects (an object with finalizers gets a deletionTimestamp first).

TYPE is RESOURCE.GROUP/VERSION, or RESOURCE/VERSION for the core group, where RESOURCE is the
plural (applications.kumori.examples.converge.dev/v1) or the kind (Application.kumori.examples.converge.dev/v1).
The plural of a kind is guessed (lower case + s; es after s, x, z, ch, sh; ies for a consonant + y:
Gateway → gateways, Policy → policies) and a kind from a plural by undoing that; override the
guesses with --plural and --kind.

Options:
  -f, --filename FILE   A YAML or JSON file of objects (repeatable)
  -n, --namespace NS    Namespace of namespaced objects without one (default: default)
  -A, --all-namespaces  get: list every namespace
  -o, --output FORMAT   get: yaml, json or name (default: a table)
  --nats URL            NATS server (default: $NATS_URL, else nats://127.0.0.1:4222)
  --bucket-prefix P     Bucket name prefix (default: $CONVERGE_NATS_BUCKET_PREFIX, else converge_)
  --plural PLURAL       The type's plural, when the guess is wrong
  --kind KIND           The type's kind, when the guess from the plural is wrong (ConfigMap)
  --cluster-scoped      The type is cluster-scoped (default: namespaced)
  -h, --help            Show this help`;

const KV_SPECS = {
  filename: { type: 'string', short: 'f', multiple: true, value: 'FILE' },
  namespace: { type: 'string', short: 'n', value: 'NS' },
  'all-namespaces': { type: 'boolean', short: 'A' },
  output: { type: 'string', short: 'o', value: 'yaml, json or name' },
  nats: { type: 'string', value: 'URL' },
  'bucket-prefix': { type: 'string', value: 'PREFIX', allowEmpty: true },
  plural: { type: 'string', value: 'PLURAL' },
  kind: { type: 'string', value: 'KIND' },
  'cluster-scoped': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionSpecs;

function usage(problem: string): UsageError {
  return new UsageError('kv', problem);
}

/** Parses `converge kv …` (argv after `kv`); throws a UsageError naming what is wrong. */
export function parseKv(args: readonly string[]): KvArgs | { readonly help: true } {
  const { values, positionals, help } = parseOptions('kv', args, KV_SPECS);
  if (help || positionals.length === 0) return { help: true };
  const [verb = '', ...rest] = positionals;
  if (verb !== 'apply' && verb !== 'get' && verb !== 'delete') {
    throw usage(`unknown verb ${shownFlag(verb)}; expected apply, get or delete`);
  }
  const files = values.filename ?? [];
  const output = values.output ?? 'table';
  if (output !== 'table' && output !== 'yaml' && output !== 'json' && output !== 'name') {
    throw usage(`--output must be yaml, json or name, got ${quote(output)}`);
  }
  if (values.output !== undefined && verb !== 'get') throw usage(`--output is only used with get`);
  if (values['all-namespaces'] === true && verb !== 'get')
    throw usage('--all-namespaces is only used with get');
  if (values['all-namespaces'] === true && values.namespace !== undefined)
    throw usage('--all-namespaces and --namespace cannot be used together');
  const resource = files.length > 0 ? undefined : rest[0];
  const names = files.length > 0 ? [] : rest.slice(1);
  if (verb === 'apply' && rest[0] !== undefined) {
    throw usage(`apply takes only -f FILE…, got the argument ${quote(rest[0])}`);
  }
  if (verb === 'apply' && files.length === 0) throw usage('apply needs -f FILE…');
  if (files.length > 0 && rest[0] !== undefined) {
    throw usage(`give either -f FILE… or TYPE NAME…, not both (got the argument ${quote(rest[0])})`);
  }
  if (files.length === 0 && resource === undefined) {
    throw usage(`${verb} needs a TYPE such as applications.kumori.examples.converge.dev/v1, or -f FILE…`);
  }
  const overrides = {
    plural: values.plural,
    kind: values.kind,
    clusterScoped: values['cluster-scoped'] ?? false,
  };
  if (resource !== undefined) checkType(resource, overrides);
  if (verb === 'delete' && files.length === 0 && names.length === 0) {
    throw usage('delete needs at least one NAME (or -f FILE…)');
  }
  if (values['all-namespaces'] === true && names.length > 0) {
    throw usage('--all-namespaces lists objects: give no NAME with it');
  }
  return {
    verb,
    files,
    resource,
    names,
    namespace: values.namespace,
    allNamespaces: values['all-namespaces'] ?? false,
    output,
    nats: values.nats,
    bucketPrefix: values['bucket-prefix'],
    plural: values.plural,
    kind: values.kind,
    clusterScoped: values['cluster-scoped'] ?? false,
  };
}

/** A malformed TYPE, or a --kind/--plural the type cannot have, is a usage error. */
function checkType(resource: string, overrides: TypeOverrides): void {
  try {
    typeFromArgument(resource, overrides);
  } catch (error) {
    if (!(error instanceof OptionsError)) throw error;
    const type = quote(resource);
    switch (error.field) {
      case 'type.kind':
        throw usage(
          overrides.kind === undefined
            ? `TYPE ${type} does not give a valid kind (PascalCase, such as ConfigMap); pass --kind`
            : `--kind must be a PascalCase kind such as ConfigMap, got ${quote(overrides.kind)}`,
        );
      case 'type.plural':
        throw usage(
          overrides.plural === undefined
            ? `TYPE ${type} does not give a valid plural (lower case, such as configmaps); pass --plural`
            : `--plural must be a lower-case plural such as configmaps, got ${quote(overrides.plural)}`,
        );
      case 'type.version':
        throw usage(`TYPE ${type} has an invalid version (a DNS label such as v1)`);
      case 'type.group':
        throw usage(`TYPE ${type} has an invalid group (a DNS subdomain such as example.com)`);
      default:
        throw usage(
          `TYPE must be RESOURCE.GROUP/VERSION, or RESOURCE/VERSION for the core group, got ${type}`,
        );
    }
  }
}
