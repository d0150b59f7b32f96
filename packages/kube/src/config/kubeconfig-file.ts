import { dirname } from 'node:path';
import { parse, YAMLError } from 'yaml';
import { FieldReader, type Mapping } from './fields.ts';

/** `clusters[].cluster` as written. */
export interface RawCluster {
  readonly server?: string;
  readonly certificateAuthority?: string;
  readonly certificateAuthorityData?: string;
  readonly insecureSkipTlsVerify?: boolean;
  readonly tlsServerName?: string;
  readonly proxyUrl?: string;
}

/** `users[].user.exec` as written. */
export interface RawExec {
  readonly apiVersion?: string;
  readonly command?: string;
  readonly args?: readonly string[];
  readonly env?: readonly { readonly name: string; readonly value: string }[];
  readonly interactiveMode?: string;
  readonly provideClusterInfo?: boolean;
  readonly installHint?: string;
}

/** `users[].user` as written. */
export interface RawUser {
  readonly token?: string;
  readonly tokenFile?: string;
  readonly clientCertificate?: string;
  readonly clientCertificateData?: string;
  readonly clientKey?: string;
  readonly clientKeyData?: string;
  readonly username?: string;
  readonly password?: string;
  readonly exec?: RawExec;
  /** Set when the user has an `auth-provider` (not supported: use an exec plugin). */
  readonly authProvider?: string;
}

/** `contexts[].context` as written. */
export interface RawContext {
  readonly cluster?: string;
  readonly user?: string;
  readonly namespace?: string;
}

/** One named entry of a kubeconfig list, with where it was written. */
export interface Named<T> {
  readonly name: string;
  readonly value: T;
  /** The kubeconfig file it came from. */
  readonly file: string;
  /** Its field path in that file, e.g. `users[2]`. */
  readonly path: string;
}

/** One kubeconfig file, parsed and type-checked (not yet merged or resolved). */
export interface KubeconfigFile {
  readonly file: string;
  /** Relative paths in the file resolve against this directory. */
  readonly dir: string;
  readonly clusters: readonly Named<RawCluster>[];
  readonly users: readonly Named<RawUser>[];
  readonly contexts: readonly Named<RawContext>[];
  readonly currentContext?: string;
}

/** Reads a named list (`clusters`, `users`, `contexts`); duplicate names are an error, as in client-go. */
function namedList<T>(
  r: FieldReader,
  root: Mapping,
  section: 'clusters' | 'users' | 'contexts',
  inner: 'cluster' | 'user' | 'context',
  read: (value: Mapping, path: string) => T,
): Named<T>[] {
  const seen = new Set<string>();
  return r.list(root[section], section).map((entry, i) => {
    const path = `${section}[${i}]`;
    const item = r.mapping(entry, path) ?? {};
    const name = r.string(item, 'name', path);
    if (name === undefined) throw r.error(`${path}.name`, 'is required');
    if (seen.has(name)) throw r.error(`${path}.name`, `duplicate name ${JSON.stringify(name)}`);
    seen.add(name);
    const valuePath = `${path}.${inner}`;
    return { name, value: read(r.mapping(item[inner], valuePath) ?? {}, valuePath), file: r.file, path };
  });
}

function readCluster(r: FieldReader, c: Mapping, path: string): RawCluster {
  return clean({
    server: r.string(c, 'server', path),
    certificateAuthority: r.string(c, 'certificate-authority', path),
    certificateAuthorityData: r.string(c, 'certificate-authority-data', path),
    insecureSkipTlsVerify: r.boolean(c, 'insecure-skip-tls-verify', path),
    tlsServerName: r.string(c, 'tls-server-name', path),
    proxyUrl: r.string(c, 'proxy-url', path),
  });
}

function readExec(r: FieldReader, e: Mapping, path: string): RawExec {
  const env = r.list(e.env, `${path}.env`).map((entry, i) => {
    const at = `${path}.env[${i}]`;
    const item = r.mapping(entry, at) ?? {};
    const name = r.string(item, 'name', at);
    if (name === undefined) throw r.error(`${at}.name`, 'is required');
    const value = item.value ?? '';
    if (typeof value !== 'string') throw r.error(`${at}.value`, 'must be a string');
    return { name, value };
  });
  return clean({
    apiVersion: r.string(e, 'apiVersion', path),
    command: r.string(e, 'command', path),
    args: r.strings(e, 'args', path),
    env: env.length === 0 ? undefined : env,
    interactiveMode: r.string(e, 'interactiveMode', path),
    provideClusterInfo: r.boolean(e, 'provideClusterInfo', path),
    installHint: r.string(e, 'installHint', path),
  });
}

function readUser(r: FieldReader, u: Mapping, path: string): RawUser {
  const exec = r.mapping(u.exec, `${path}.exec`);
  const authProvider = r.mapping(u['auth-provider'], `${path}.auth-provider`);
  return clean({
    token: r.string(u, 'token', path),
    tokenFile: r.string(u, 'tokenFile', path),
    clientCertificate: r.string(u, 'client-certificate', path),
    clientCertificateData: r.string(u, 'client-certificate-data', path),
    clientKey: r.string(u, 'client-key', path),
    clientKeyData: r.string(u, 'client-key-data', path),
    username: r.string(u, 'username', path),
    password: r.string(u, 'password', path),
    exec: exec === undefined ? undefined : readExec(r, exec, `${path}.exec`),
    authProvider:
      authProvider === undefined
        ? undefined
        : (r.string(authProvider, 'name', `${path}.auth-provider`) ?? 'unnamed'),
  });
}

function readContext(r: FieldReader, c: Mapping, path: string): RawContext {
  return clean({
    cluster: r.string(c, 'cluster', path),
    user: r.string(c, 'user', path),
    namespace: r.string(c, 'namespace', path),
  });
}

/**
 * Parses one kubeconfig file (YAML or JSON). Every field is type-checked; a malformed file throws a
 * `KubeconfigError` naming `file` and the field. Empty files are empty configs. Unknown fields
 * (`preferences`, `extensions`) are ignored, as kubectl ignores them.
 *
 * @example
 * const parsed = parseKubeconfig(readFileSync(file, 'utf8'), file);
 * parsed.contexts.map((c) => c.name);
 */
export function parseKubeconfig(text: string, file: string): KubeconfigFile {
  const r = new FieldReader(file);
  let document: unknown;
  try {
    document = parse(text, { maxAliasCount: 100 });
  } catch (error) {
    const problem = error instanceof YAMLError ? error.message : String(error);
    throw r.error('(document)', `is not valid YAML: ${problem}`, error);
  }
  const root = r.mapping(document, '(document)') ?? {};
  const kind = r.string(root, 'kind', '');
  if (kind !== undefined && kind !== 'Config') throw r.error('kind', `must be Config, got ${kind}`);
  return {
    file,
    dir: dirname(file),
    clusters: namedList(r, root, 'clusters', 'cluster', (v, p) => readCluster(r, v, p)),
    users: namedList(r, root, 'users', 'user', (v, p) => readUser(r, v, p)),
    contexts: namedList(r, root, 'contexts', 'context', (v, p) => readContext(r, v, p)),
    ...clean({ currentContext: r.string(root, 'current-context', '') }),
  };
}

/** Drops undefined members (for exactOptionalPropertyTypes). */
function clean<T extends object>(object: { [K in keyof T]: T[K] | undefined }): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) if (value !== undefined) out[key] = value;
  return out as T;
}
