import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { stringify } from 'yaml';
import { ApiServerErrorCodes, ApiServerStartError } from './errors.ts';

/** What a kubeconfig for the embedded server carries. */
export interface KubeconfigOptions {
  /** `https://127.0.0.1:PORT` (or `http://` when insecure). */
  readonly server: string;
  /** The CA certificate (PEM); absent when insecure. */
  readonly ca?: string;
  /** The bearer token; absent when insecure. */
  readonly token?: string;
  /** Context, cluster and user name. Default `converge`. */
  readonly name?: string;
  /** The context's namespace. Default `default`. */
  readonly namespace?: string;
}

/**
 * A kubeconfig (YAML) with one cluster, user and context — named `converge` and set as current,
 * namespace `default` — that kubectl and @kubernetes/client-node accept.
 */
export function kubeconfigYaml(options: KubeconfigOptions): string {
  const name = options.name ?? 'converge';
  const cluster: Record<string, string> = { server: options.server };
  if (options.ca !== undefined)
    cluster['certificate-authority-data'] = Buffer.from(options.ca, 'utf8').toString('base64');
  const user: Record<string, string> = {};
  if (options.token !== undefined) user.token = options.token;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name, user }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: options.namespace ?? 'default' } }],
    'current-context': name,
    preferences: {},
  });
}

/** Writes a kubeconfig atomically (temporary file + rename), readable by the owner only. */
export function writeKubeconfig(path: string, options: KubeconfigOptions): void {
  try {
    mkdirSync(dirname(path), { recursive: true });
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, kubeconfigYaml(options), { mode: 0o600 });
    renameSync(temporary, path);
  } catch (cause) {
    throw new ApiServerStartError(
      ApiServerErrorCodes.KUBECONFIG_FAILED,
      `cannot write the kubeconfig ${path}: ${(cause as Error).message}`,
      {
        cause,
      },
    );
  }
}
