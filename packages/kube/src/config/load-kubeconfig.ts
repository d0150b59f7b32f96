import { InClusterConfigError, KubeconfigNotFoundError } from '../errors.ts';
import { type InClusterOptions, inClusterConfig } from './in-cluster.ts';
import type { KubeConfig } from './kube-config.ts';
import {
  type Environment,
  kubeconfigPaths,
  mergeKubeconfigs,
  readKubeconfigFiles,
} from './kubeconfig-merge.ts';
import { resolveContext } from './kubeconfig-resolve.ts';

/** Options of {@link loadKubeconfig}. */
export interface LoadKubeconfigOptions {
  /** One kubeconfig file. Default: the files of `KUBECONFIG`, else `~/.kube/config`. */
  readonly path?: string;
  /** The context to use. Default: the merged `current-context`. */
  readonly context?: string;
  /** Overrides the context's namespace. */
  readonly namespace?: string;
  /** Where `KUBECONFIG` and `HOME` are read. Default `process.env`. */
  readonly env?: Environment;
  /** Relative paths resolve against this. Default `process.cwd()`. */
  readonly cwd?: string;
}

/**
 * Loads a kubeconfig as kubectl does and resolves one context into a {@link KubeConfig}.
 *
 * - Files: `path`, else every file in `KUBECONFIG` (missing ones skipped), else `~/.kube/config`.
 * - Merge: for clusters, users and contexts the first file defining a name wins; `current-context`
 *   comes from the first file that sets it.
 * - Resolve: the context's cluster (server, CA data or file, `insecure-skip-tls-verify`,
 *   `tls-server-name`) and user (token, `tokenFile`, client certificate and key as data or files,
 *   basic auth, or an exec credential plugin), files read relative to the kubeconfig naming them.
 *
 * A malformed or inconsistent kubeconfig throws a `KubeconfigError` naming the file and the field;
 * no file at all throws a `KubeconfigNotFoundError`.
 *
 * @example
 * const config = loadKubeconfig({ context: 'kind-dev', env: process.env });
 * const backend = new KubeBackend({ config });
 */
export function loadKubeconfig(options: LoadKubeconfigOptions = {}): KubeConfig {
  const env = options.env ?? process.env;
  const paths = kubeconfigPaths(options.path, env, options.cwd ?? process.cwd());
  const files = readKubeconfigFiles(paths, options.path !== undefined);
  return resolveContext(mergeKubeconfigs(files), {
    ...(options.context === undefined ? {} : { context: options.context }),
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
  });
}

/**
 * client-go's default loading rules: a kubeconfig when one exists (an explicit `path`, `KUBECONFIG`,
 * `~/.kube/config`), else the pod's service account ({@link inClusterConfig}). Errors in an existing
 * kubeconfig are thrown, never papered over by the in-cluster fallback.
 *
 * @example
 * const backend = new KubeBackend({ config: loadConfig({ context: argv.context }) });
 */
export function loadConfig(options: LoadKubeconfigOptions & InClusterOptions = {}): KubeConfig {
  try {
    return loadKubeconfig(options);
  } catch (error) {
    if (!(error instanceof KubeconfigNotFoundError) || options.path !== undefined) throw error;
    try {
      const config = inClusterConfig(options);
      return options.namespace === undefined ? config : { ...config, namespace: options.namespace };
    } catch (inCluster) {
      if (inCluster instanceof InClusterConfigError) throw error;
      throw inCluster;
    }
  }
}
