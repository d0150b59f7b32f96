import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve, sep } from 'node:path';
import { KubeconfigError } from '../errors.ts';
import type { ExecConfig, KubeAuthConfig, KubeConfig, KubeTlsConfig } from './kube-config.ts';
import type { Named, RawCluster, RawExec, RawUser } from './kubeconfig-file.ts';
import type { MergedKubeconfig } from './kubeconfig-merge.ts';

const EXEC_VERSIONS = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'];
const INTERACTIVE_MODES = ['Never', 'IfAvailable', 'Always'] as const;

/** Where a field of a named entry lives, for errors. */
interface Site {
  readonly file: string;
  readonly path: string;
}

function fail(site: Site, field: string, problem: string, cause?: unknown): KubeconfigError {
  return new KubeconfigError(
    site.file,
    `${site.path}.${field}`,
    problem,
    cause === undefined ? undefined : { cause },
  );
}

/** Reads a file named in a kubeconfig (relative to it) as UTF-8. */
function readNamedFile(site: Site, field: string, path: string): { path: string; text: string } {
  const full = resolve(dirname(site.file), path);
  try {
    return { path: full, text: readFileSync(full, 'utf8') };
  } catch (error) {
    throw fail(site, field, `cannot read ${full}: ${(error as Error).message}`, error);
  }
}

/** Decodes a `*-data` field (base64 PEM) and checks it is PEM. */
function pemData(site: Site, field: string, data: string): string {
  const compact = data.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) throw fail(site, field, 'is not base64');
  return checkPem(site, field, Buffer.from(compact, 'base64').toString('utf8'));
}

function checkPem(site: Site, field: string, text: string): string {
  if (!text.includes('-----BEGIN ')) throw fail(site, field, 'does not contain a PEM block (-----BEGIN …)');
  return text;
}

/** PEM from `*-data` (which wins, as in client-go) or from a file. */
function pem(
  site: Site,
  dataField: string,
  data: string | undefined,
  fileField: string,
  file: string | undefined,
) {
  if (data !== undefined) return pemData(site, dataField, data);
  if (file !== undefined) return checkPem(site, fileField, readNamedFile(site, fileField, file).text);
  return undefined;
}

function serverUrl(site: Site, server: string | undefined): string {
  if (server === undefined) throw fail(site, 'cluster.server', 'is required');
  const withScheme = server.includes('://') ? server : `https://${server}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch (error) {
    throw fail(site, 'cluster.server', `is not a URL: ${JSON.stringify(server)}`, error);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw fail(site, 'cluster.server', `must be an http or https URL, got ${url.protocol}`);
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw fail(site, 'cluster.server', 'must not carry credentials, a query or a fragment');
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** The TLS part of a cluster (CA, server name, insecure). */
function clusterTls(entry: Named<RawCluster>): Omit<KubeTlsConfig, 'cert' | 'key'> {
  const c = entry.value;
  const site = { file: entry.file, path: entry.path };
  if (c.proxyUrl !== undefined) throw fail(site, 'cluster.proxy-url', 'is not supported by Converge');
  const ca = pem(
    site,
    'cluster.certificate-authority-data',
    c.certificateAuthorityData,
    'cluster.certificate-authority',
    c.certificateAuthority,
  );
  if (c.insecureSkipTlsVerify === true && ca !== undefined) {
    throw fail(
      site,
      'cluster.insecure-skip-tls-verify',
      'cannot be true together with a certificate authority (drop one of them)',
    );
  }
  return {
    ...(ca === undefined ? {} : { ca }),
    ...(c.insecureSkipTlsVerify === true ? { insecureSkipTlsVerify: true } : {}),
    ...(c.tlsServerName === undefined ? {} : { serverName: c.tlsServerName }),
  };
}

function execConfig(site: Site, e: RawExec): ExecConfig {
  if (e.apiVersion === undefined || !EXEC_VERSIONS.includes(e.apiVersion)) {
    throw fail(
      site,
      'user.exec.apiVersion',
      `must be one of ${EXEC_VERSIONS.join(', ')}, got ${String(e.apiVersion)}`,
    );
  }
  if (e.command === undefined) throw fail(site, 'user.exec.command', 'is required');
  const mode = e.interactiveMode;
  if (mode === undefined && e.apiVersion.endsWith('/v1')) {
    throw fail(
      site,
      'user.exec.interactiveMode',
      'is required for client.authentication.k8s.io/v1 (use Never)',
    );
  }
  if (mode !== undefined && !(INTERACTIVE_MODES as readonly string[]).includes(mode)) {
    throw fail(site, 'user.exec.interactiveMode', `must be Never, IfAvailable or Always, got ${mode}`);
  }
  // client-go: a relative command with a path separator is relative to the kubeconfig file.
  const command =
    !isAbsolute(e.command) && (e.command.includes(sep) || e.command.includes('/'))
      ? resolve(dirname(site.file), e.command)
      : e.command;
  return {
    apiVersion: e.apiVersion,
    command,
    ...(e.args === undefined ? {} : { args: e.args }),
    ...(e.env === undefined ? {} : { env: e.env }),
    ...(mode === undefined ? {} : { interactiveMode: mode as NonNullable<ExecConfig['interactiveMode']> }),
    ...(e.provideClusterInfo === true ? { provideClusterInfo: true } : {}),
    ...(e.installHint === undefined ? {} : { installHint: e.installHint }),
  };
}

/** The user's authentication and client certificate. */
function userAuth(entry: Named<RawUser> | undefined): {
  auth: KubeAuthConfig;
  tls: Pick<KubeTlsConfig, 'cert' | 'key'>;
} {
  if (entry === undefined) return { auth: { type: 'none' }, tls: {} };
  const u = entry.value;
  const site = { file: entry.file, path: entry.path };
  if (u.authProvider !== undefined) {
    throw fail(
      site,
      'user.auth-provider',
      `auth-provider ${JSON.stringify(u.authProvider)} is not supported; configure an exec credential plugin instead`,
    );
  }
  const methods = [
    u.token !== undefined || u.tokenFile !== undefined ? 'token' : undefined,
    u.username !== undefined || u.password !== undefined ? 'basic' : undefined,
    u.exec !== undefined ? 'exec' : undefined,
  ].filter((m) => m !== undefined);
  if (methods.length > 1)
    throw fail(site, 'user', `sets more than one authentication method (${methods.join(', ')}); keep one`);
  const cert = pem(
    site,
    'user.client-certificate-data',
    u.clientCertificateData,
    'user.client-certificate',
    u.clientCertificate,
  );
  const key = pem(site, 'user.client-key-data', u.clientKeyData, 'user.client-key', u.clientKey);
  if ((cert === undefined) !== (key === undefined)) {
    throw fail(
      site,
      cert === undefined ? 'user.client-certificate' : 'user.client-key',
      'is required with the client key and certificate set together',
    );
  }
  const tls = cert === undefined || key === undefined ? {} : { cert, key };
  let auth: KubeAuthConfig = { type: 'none' };
  if (u.token !== undefined) auth = { type: 'token', token: u.token };
  else if (u.tokenFile !== undefined)
    auth = { type: 'tokenFile', path: readNamedFile(site, 'user.tokenFile', u.tokenFile).path };
  else if (u.username !== undefined || u.password !== undefined) {
    if (u.username === undefined || u.password === undefined) {
      throw fail(
        site,
        u.username === undefined ? 'user.username' : 'user.password',
        'is required with basic authentication',
      );
    }
    auth = { type: 'basic', username: u.username, password: u.password };
  } else if (u.exec !== undefined) auth = { type: 'exec', exec: execConfig(site, u.exec) };
  return { auth, tls };
}

/**
 * Resolves one context of merged kubeconfigs into a {@link KubeConfig}: the context (given, or the
 * current one), its cluster (server, CA, TLS options) and user (token, token file, client
 * certificate, basic auth or exec plugin), reading the files they name relative to the kubeconfig
 * that names them.
 *
 * @example
 * const config = resolveContext(mergeKubeconfigs(files), { context: 'kind-dev' });
 */
export function resolveContext(
  merged: MergedKubeconfig,
  options: { readonly context?: string; readonly namespace?: string },
): KubeConfig {
  const all = merged.files.join(', ');
  const name = options.context ?? merged.currentContext?.name;
  if (name === undefined) {
    throw new KubeconfigError(
      all,
      'current-context',
      'is not set; set it (kubectl config use-context) or pass a context',
    );
  }
  const context = merged.contexts.get(name);
  if (context === undefined) {
    const file = options.context === undefined ? (merged.currentContext?.file ?? all) : all;
    const field = options.context === undefined ? 'current-context' : 'contexts';
    throw new KubeconfigError(file, field, `no context named ${JSON.stringify(name)}`);
  }
  const site = { file: context.file, path: context.path };
  const clusterName = context.value.cluster;
  if (clusterName === undefined) throw fail(site, 'context.cluster', 'is required');
  const cluster = merged.clusters.get(clusterName);
  if (cluster === undefined)
    throw fail(
      site,
      'context.cluster',
      `names cluster ${JSON.stringify(clusterName)}, which no kubeconfig defines`,
    );
  const userName = context.value.user;
  const user = userName === undefined ? undefined : merged.users.get(userName);
  if (userName !== undefined && user === undefined) {
    throw fail(site, 'context.user', `names user ${JSON.stringify(userName)}, which no kubeconfig defines`);
  }
  const server = serverUrl({ file: cluster.file, path: cluster.path }, cluster.value.server);
  const { auth, tls } = userAuth(user);
  return {
    server,
    namespace: options.namespace ?? context.value.namespace ?? 'default',
    tls: { ...clusterTls(cluster), ...tls },
    auth,
    context: name,
    source: all,
  };
}
