/**
 * `converge why KIND/NAME [-n NS] [--address URL] [--json]`, parsed: which object, and which
 * operator to ask (see why-cmd.ts).
 */
import { quote, UsageError } from './errors.ts';
import { guessKind, guessPlural } from './kv-types.ts';
import { type OptionSpecs, parseOptions } from './options.ts';

/** `converge why …`, parsed. */
export interface WhyArgs {
  /** The kind or resource as typed, without its group (`Website`, `websites`, `configmap`). */
  readonly resource: string;
  /** The API group after the first dot (`deployments.apps/web`), if given. */
  readonly group: string | undefined;
  readonly name: string;
  /** `-n`: the namespace (default `default`; not used for a cluster-scoped object's key). */
  readonly namespace: string;
  /** `--address`: the operations server's base URL (undefined: the one recorded by dev or run). */
  readonly address: string | undefined;
  readonly json: boolean;
}

export const WHY_HELP = `Usage: converge why KIND/NAME [options]

Asks a running operator (converge dev or converge run, through its operations server's
/debug/keys) why an object is being reconciled: for each controller that holds its key, the state
(running, backoff, waiting, queued), the causes of its next run and of the run in progress, the
cause chain, attempts, the last error, the next retry, and whether it is in a hot loop. An object no
controller holds is idle (its last reconcile succeeded) or of a kind no controller watches; that
is said, and the exit code is 0.

KIND is a kind or its resource plural, any case, optionally with its group: Website/web,
websites/web, configmap/settings, deployments.apps/web.

Without --address, the operator is the one converge dev or converge run started in this
directory (they record their metrics address in .converge/operations.json while they serve it).

Options:
  -n, --namespace NS    The object's namespace (default: default; ignored for cluster-scoped kinds)
  --address URL         The operator's metrics address, as printed at its start
                        (http://127.0.0.1:8080, or HOST:PORT)
  --json                Print the answer as JSON (the matching keys, as /debug/keys has them)
  -h, --help            Show this help

Exit codes: 0 answered; 1 no operator to ask (none recorded, connection refused, no answer
within 3 s, or no /debug/keys at the address); 2 a bad command line.`;

const WHY_SPECS = {
  namespace: { type: 'string', short: 'n', value: 'NS' },
  address: { type: 'string', value: 'URL' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionSpecs;

/** A kind or a plural, optionally `.group` (a DNS subdomain). */
const RESOURCE =
  /^([A-Za-z][A-Za-z0-9]{0,62})(?:\.([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*))?$/;
/** A Kubernetes namespace: a DNS label. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** An object name: printable ASCII without `/` or `%` (every kind's names fit; most are stricter). */
const NAME = /^[\x21-\x24\x26-\x2e\x30-\x7e]{1,253}$/;

function usage(problem: string): UsageError {
  return new UsageError('why', problem);
}

/** Parses `converge why …` (argv after `why`); throws a UsageError naming what is wrong. */
export function parseWhy(args: readonly string[]): WhyArgs | { readonly help: true } {
  const { values, positionals, help } = parseOptions('why', args, WHY_SPECS);
  if (help) return { help: true };
  const [target, extra] = positionals;
  if (target === undefined)
    throw usage('which object? give KIND/NAME, such as configmap/settings or Website/web');
  if (extra !== undefined)
    throw usage(`takes one KIND/NAME, got also ${quote(extra)} (one object at a time)`);
  const slash = target.indexOf('/');
  if (slash < 0)
    throw usage(`${quote(target)} is not KIND/NAME: name the object, such as configmap/settings`);
  const kind = target.slice(0, slash);
  const name = target.slice(slash + 1);
  const resource = RESOURCE.exec(kind);
  if (resource === null)
    throw usage(
      `${quote(kind)} is not a kind or resource (letters and digits, optionally .group: Website, websites, deployments.apps)`,
    );
  if (!NAME.test(name) || name === '.' || name === '..')
    throw usage(
      `${quote(name)} is not an object name (1-253 printable characters, no / or %)${name.includes('/') ? '; give the namespace with -n' : ''}`,
    );
  const namespace = values.namespace ?? 'default';
  if (namespace.length > 63 || !DNS_LABEL.test(namespace))
    throw usage(
      `--namespace must be a DNS label (lower-case letters, digits and -, at most 63), got ${quote(namespace)}`,
    );
  return {
    resource: resource[1] as string,
    group: resource[2],
    name,
    namespace,
    address: values.address === undefined ? undefined : addressOf(values.address),
    json: values.json ?? false,
  };
}

/**
 * The base URL of `--address`: an `http://` or `https://` URL (a path ending in `/metrics` or
 * `/debug/keys`, as the startup line prints them, is dropped), or `HOST:PORT` for `http://HOST:PORT`.
 */
export function addressOf(text: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  let url: URL | undefined;
  try {
    url = new URL(withScheme);
  } catch {
    url = undefined;
  }
  if (
    url === undefined ||
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.hostname === '' ||
    url.search !== '' ||
    url.hash !== '' ||
    url.username !== '' ||
    url.password !== ''
  )
    throw usage(
      `--address must be the operator's metrics address, such as http://127.0.0.1:8080 or 127.0.0.1:8080, got ${quote(text)}`,
    );
  const path = url.pathname.replace(/\/(metrics|debug\/keys)\/?$/, '').replace(/\/+$/, '');
  return `${url.origin}${path}`;
}

/** The lower-case words that name a kind: as typed, its guessed plural, its guessed singular. */
export function kindWords(word: string): Set<string> {
  const lower = word.toLowerCase();
  return new Set([lower, guessPlural(lower), guessKind(lower).toLowerCase()]);
}

/** Built-in cluster-scoped kinds and their plurals, lower case. */
const CLUSTER_SCOPED = new Set(
  [
    'namespace',
    'node',
    'persistentvolume',
    'clusterrole',
    'clusterrolebinding',
    'customresourcedefinition',
    'storageclass',
    'priorityclass',
    'ingressclass',
    'runtimeclass',
    'validatingwebhookconfiguration',
    'mutatingwebhookconfiguration',
    'apiservice',
    'csidriver',
    'csinode',
    'volumeattachment',
  ].flatMap((kind) => [kind, guessPlural(kind)]),
);

/** Whether `resource` (a kind or plural, any case) is a built-in cluster-scoped one (`Namespace`, `nodes`). */
export function isClusterScoped(resource: string): boolean {
  return CLUSTER_SCOPED.has(resource.toLowerCase());
}
