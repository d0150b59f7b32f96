/**
 * Cluster connection config: kubeconfig files merged as kubectl merges them, in-cluster service
 * accounts, and the credentials a request carries (tokens, token files, client certificates, basic
 * auth, exec credential plugins).
 *
 * @module
 */
export { type CredentialSource, type Credentials, credentialSource } from './credentials.ts';
export { type ExecCredential, ExecCredentialCache, parseExecCredential } from './exec-credential.ts';
export { type InClusterOptions, inClusterConfig, SERVICE_ACCOUNT_DIR } from './in-cluster.ts';
export type { ExecConfig, ExecEnvVar, KubeAuthConfig, KubeConfig, KubeTlsConfig } from './kube-config.ts';
export { type KubeconfigFile, parseKubeconfig } from './kubeconfig-file.ts';
export {
  type Environment,
  kubeconfigPaths,
  type MergedKubeconfig,
  mergeKubeconfigs,
} from './kubeconfig-merge.ts';
export { resolveContext } from './kubeconfig-resolve.ts';
export { type LoadKubeconfigOptions, loadConfig, loadKubeconfig } from './load-kubeconfig.ts';
