import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InClusterConfigError } from '../errors.ts';
import type { KubeConfig } from './kube-config.ts';
import type { Environment } from './kubeconfig-merge.ts';

/** Where Kubernetes mounts a pod's service account. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** Options of {@link inClusterConfig}. */
export interface InClusterOptions {
  /** Where `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT` are read. Default `process.env`. */
  readonly env?: Environment;
  /** The service-account directory (token, ca.crt, namespace). Default {@link SERVICE_ACCOUNT_DIR}. */
  readonly serviceAccountDir?: string;
}

function read(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new InClusterConfigError(`cannot read the ${what} ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/**
 * The config of a process running in a pod, as client-go's `InClusterConfig`: the API server from
 * `KUBERNETES_SERVICE_HOST` / `KUBERNETES_SERVICE_PORT`, the service account's CA, its token (a
 * token file re-read before it expires, since bound tokens rotate), and its namespace. Throws an
 * `InClusterConfigError` outside a pod.
 *
 * @example
 * const backend = new KubeBackend({ config: inClusterConfig() });
 */
export function inClusterConfig(options: InClusterOptions = {}): KubeConfig {
  const env = options.env ?? process.env;
  const dir = options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (host === undefined || host === '' || port === undefined || port === '') {
    throw new InClusterConfigError(
      'KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set (is this process running in a pod?)',
    );
  }
  if (!/^[0-9]{1,5}$/.test(port)) {
    throw new InClusterConfigError(`KUBERNETES_SERVICE_PORT is not a port: ${JSON.stringify(port)}`);
  }
  const tokenPath = join(dir, 'token');
  if (read(tokenPath, 'service-account token').trim() === '') {
    throw new InClusterConfigError(`the service-account token ${tokenPath} is empty`);
  }
  const ca = read(join(dir, 'ca.crt'), 'service-account CA');
  let namespace = 'default';
  try {
    namespace = readFileSync(join(dir, 'namespace'), 'utf8').trim() || 'default';
  } catch {
    // client-go falls back to "default" too.
  }
  const shownHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return {
    server: `https://${shownHost}:${port}`,
    namespace,
    tls: { ca },
    auth: { type: 'tokenFile', path: tokenPath },
    source: 'in-cluster',
  };
}
