/** TLS settings of a connection to the API server. PEM strings, already read from files. */
export interface KubeTlsConfig {
  /** CA certificates (PEM) trusted for the server. Default: the system roots. */
  readonly ca?: string;
  /** Client certificate (PEM) for mutual TLS. */
  readonly cert?: string;
  /** Client key (PEM) for mutual TLS. */
  readonly key?: string;
  /** Skip verifying the server certificate (kubeconfig `insecure-skip-tls-verify`). Default false. */
  readonly insecureSkipTlsVerify?: boolean;
  /** Name to verify the server certificate against (kubeconfig `tls-server-name`). */
  readonly serverName?: string;
}

/** An environment variable set for an exec credential plugin. */
export interface ExecEnvVar {
  readonly name: string;
  readonly value: string;
}

/** An exec credential plugin (kubeconfig `users[].user.exec`). */
export interface ExecConfig {
  /** `client.authentication.k8s.io/v1` (or `v1beta1`): the ExecCredential version asked for. */
  readonly apiVersion: string;
  /** The program; a relative path with a slash was resolved against the kubeconfig's directory. */
  readonly command: string;
  readonly args?: readonly string[];
  readonly env?: readonly ExecEnvVar[];
  /** `Never`, `IfAvailable` or `Always`. Converge never runs plugins interactively. */
  readonly interactiveMode?: 'Never' | 'IfAvailable' | 'Always';
  /** Pass the cluster (server, CA) to the plugin in `KUBERNETES_EXEC_INFO`. */
  readonly provideClusterInfo?: boolean;
  /** Shown when the command cannot be found. */
  readonly installHint?: string;
}

/**
 * How requests authenticate, besides a client certificate in {@link KubeTlsConfig}:
 * - `none`: anonymous (or client certificate only);
 * - `token`: a fixed bearer token;
 * - `tokenFile`: a bearer token re-read from a file (rotated service-account tokens);
 * - `basic`: username and password (deprecated in Kubernetes);
 * - `exec`: an exec credential plugin, run on demand and cached until its credential expires.
 */
export type KubeAuthConfig =
  | { readonly type: 'none' }
  | { readonly type: 'token'; readonly token: string }
  | { readonly type: 'tokenFile'; readonly path: string }
  | { readonly type: 'basic'; readonly username: string; readonly password: string }
  | { readonly type: 'exec'; readonly exec: ExecConfig };

/**
 * Everything needed to talk to one cluster as one user, resolved from a kubeconfig context
 * ({@link loadKubeconfig}), from a pod's service account ({@link inClusterConfig}), or written by
 * hand. Certificates are PEM strings (files were read at load time); a token file is re-read.
 *
 * @example
 * const config: KubeConfig = {
 *   server: 'https://127.0.0.1:6443',
 *   namespace: 'default',
 *   tls: { ca: readFileSync('ca.crt', 'utf8') },
 *   auth: { type: 'token', token: process.env.TOKEN ?? '' },
 * };
 */
export interface KubeConfig {
  /** `https://host:port`, possibly with a path prefix (`https://rancher/k8s/clusters/c-1`). */
  readonly server: string;
  /** The default namespace: for objects without one. Default `default`. */
  readonly namespace: string;
  readonly tls: KubeTlsConfig;
  readonly auth: KubeAuthConfig;
  /** The kubeconfig context it came from, if any. */
  readonly context?: string;
  /** Where it came from (kubeconfig files, `in-cluster`), for messages. */
  readonly source?: string;
}
