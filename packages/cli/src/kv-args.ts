import { parseArgs } from 'node:util';
import { OptionsError } from '@converge/runtime';
import { typeFromArgument } from './kv-types.ts';

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

function kvOptions(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: {
      filename: { type: 'string', short: 'f', multiple: true },
      namespace: { type: 'string', short: 'n' },
      'all-namespaces': { type: 'boolean', short: 'A' },
      output: { type: 'string', short: 'o' },
      nats: { type: 'string' },
      'bucket-prefix': { type: 'string' },
      plural: { type: 'string' },
      kind: { type: 'string' },
      'cluster-scoped': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

/** Parses `converge kv …` (argv after `kv`); throws OptionsError naming what is wrong. */
export function parseKv(args: string[]): KvArgs | { readonly help: true } {
  let parsed: ReturnType<typeof kvOptions>;
  try {
    parsed = kvOptions(args);
  } catch (error) {
    throw new OptionsError(
      'arguments',
      args.join(' '),
      `valid options for 'converge kv' (${(error as Error).message})`,
    );
  }
  const { values, positionals } = parsed;
  if (values.help === true || positionals.length === 0) return { help: true };
  const [verb, ...rest] = positionals;
  if (verb !== 'apply' && verb !== 'get' && verb !== 'delete') {
    throw new OptionsError('kv command', verb, "one of 'apply', 'get', 'delete' (see converge kv --help)");
  }
  const files = values.filename ?? [];
  const output = values.output ?? 'table';
  if (output !== 'table' && output !== 'yaml' && output !== 'json' && output !== 'name') {
    throw new OptionsError('--output', output, 'yaml, json or name');
  }
  if (values.output !== undefined && verb !== 'get')
    throw new OptionsError('--output', output, 'only with get');
  if (values['all-namespaces'] === true && (verb !== 'get' || values.namespace !== undefined)) {
    throw new OptionsError('--all-namespaces', true, 'only with get, and not with --namespace');
  }
  const resource = files.length > 0 ? undefined : rest[0];
  const names = files.length > 0 ? [] : rest.slice(1);
  if (verb === 'apply' && (files.length === 0 || rest.length > 0)) {
    throw new OptionsError(
      '--filename',
      rest.join(' ') || undefined,
      'apply takes -f FILE… and no other arguments',
    );
  }
  if (files.length > 0 && rest.length > 0) {
    throw new OptionsError('arguments', rest.join(' '), 'either -f FILE… or TYPE NAME…, not both');
  }
  if (files.length === 0 && resource === undefined) {
    throw new OptionsError(
      'TYPE',
      undefined,
      `a type such as applications.kumori.examples.converge.dev/v1 (converge kv ${verb} TYPE)`,
    );
  }
  const overrides = {
    plural: values.plural,
    kind: values.kind,
    clusterScoped: values['cluster-scoped'] ?? false,
  };
  if (resource !== undefined) typeFromArgument(resource, overrides); // a malformed TYPE is a usage error
  if (verb === 'delete' && files.length === 0 && names.length === 0) {
    throw new OptionsError('NAME', undefined, 'at least one name to delete');
  }
  if (values['all-namespaces'] === true && names.length > 0) {
    throw new OptionsError('--all-namespaces', true, 'a list: no NAME with -A');
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
