import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { stringify } from 'yaml';
import { ApiServerErrorCodes, ApiServerStartError } from './errors.ts';
import { PRIVATE_DIR_MODE, writePrivateFile } from './private-files.ts';

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

/**
 * Writes a kubeconfig atomically (temporary file + rename), mode 0600 whatever was there; missing
 * directories are created 0700 (an existing one, which may be shared, is left as it is).
 */
export function writeKubeconfig(path: string, options: KubeconfigOptions): void {
  writeServerFile(path, kubeconfigYaml(options), 'the kubeconfig');
}

/** Writes one of the files the server hands out (kubeconfig, token file) as {@link writeKubeconfig} does. */
export function writeServerFile(path: string, content: string, what: string): void {
  try {
    const dir = dirname(path);
    if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    writePrivateFile(path, content);
  } catch (cause) {
    throw new ApiServerStartError(
      ApiServerErrorCodes.KUBECONFIG_FAILED,
      `cannot write ${what} ${path}: ${(cause as Error).message}`,
      { cause },
    );
  }
}
