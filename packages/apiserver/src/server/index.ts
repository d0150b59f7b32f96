/**
 * The HTTP core of Converge's embedded Kubernetes API server: what real `kubectl` and
 * `@kubernetes/client-node` talk to without knowing it is not kube-apiserver.
 *
 * - {@link createApiServer} → {@link ApiServer}: `listen()` binds 127.0.0.1 (port 0 = free), serves
 *   TLS with its own CA (kept in `dataDir`), requires a bearer token, writes a kubeconfig; `close()`
 *   ends watches cleanly.
 * - Fault injection ({@link FaultInjector}, `server.faults`; over HTTP at `/converge/faults` only
 *   with the `faultAdmin` option and its own token):
 *   drop watches, delay requests, fail a ratio of them with 409/410/429/500/503 (before or after
 *   applying a write), stall watches until released, restart keeping the store.
 * - Discovery as kube-apiserver 1.32 serves it: `/version`, legacy (`/api`, `/apis`, `/api/v1`,
 *   `/apis/{g}/{v}`) and aggregated (`apidiscovery.k8s.io` v2 and v2beta1, exact Content-Type),
 *   and a minimal `/openapi/v3` so default `kubectl apply` validates on the server.
 * - REST over the store: get, list (selectors, pagination, resourceVersion semantics, streamed),
 *   watch (flushed headers, bookmarks, `sendInitialEvents`, 410 as an ERROR event, clean close,
 *   each change encoded once), create, update, patch (merge and JSON patch; strategic merge and
 *   apply through {@link ApiServerExtensions}), delete and deletecollection, `status` and `scale`
 *   subresources, dry-run, field validation; every error a `metav1.Status`.
 * - Built-in kinds with their strategies (Namespace, ConfigMap, Secret, ServiceAccount, Service,
 *   Pod, Event in core/v1 and events.k8s.io/v1, Deployment, ReplicaSet, StatefulSet, Job, Lease,
 *   CustomResourceDefinition, webhook configurations) and CRDs served as soon as they are created.
 * - Errors: `CONVERGE_ERR_APISERVER_*` ({@link ApiServerErrorCodes}); request failures map to the
 *   runtime's backend errors.
 *
 * @example
 * import { createApiServer } from '@converge/apiserver';
 *
 * const server = createApiServer({ kubeconfigPath: '.converge/kubeconfig' });
 * const { url } = await server.listen();
 * console.log(`kubectl --kubeconfig .converge/kubeconfig get ns  # ${url}`);
 *
 * @module
 */

export { isLoopbackHost } from '@converge/runtime';
export {
  AdmissionDeniedError,
  AdmissionErrorCodes,
  AdmissionWebhookError,
  type LocalWebhookDispatch,
  type LocalWebhooks,
  localServiceResolver,
  POLICY_AUDIT_CHANNEL,
  type PolicyAuditEvent,
  PolicyDeniedError,
  PolicyErrorCodes,
  type WebhookService,
  type WebhookServiceResolver,
} from '../admission/index.ts';
export type { ApiResource, ScaleSpec, Strategy, StrategyContext, VersionConverter } from './api-resource.ts';
export { type ApiServer, createApiServer, insecureExposure } from './api-server.ts';
export {
  CONVERSION_TIMEOUT_MS,
  ConversionErrorCodes,
  ConversionWebhookError,
  type ConversionWebhookOptions,
} from './conversion-webhook.ts';
export {
  ApiServerErrorCodes,
  ApiServerStartError,
  HttpStatusError,
  type HttpStatusReason,
} from './errors.ts';
export type {
  ApiServerExtensions,
  CustomResourceHooks,
  PatchContext,
  PatchHooks,
  ProtobufHooks,
  TableHooks,
  TableOptions,
} from './extensions.ts';
export { FAULT_ADMIN_PATH } from './fault-admin.ts';
export { FaultError, FaultErrorCodes } from './fault-errors.ts';
export type {
  FaultCounters,
  FaultHandle,
  FaultInjector,
  RestartOptions,
  StallHandle,
} from './fault-injector.ts';
export { FAULT_HEADER } from './fault-response.ts';
export type {
  DelayFault,
  FailRatioFault,
  FaultMethod,
  FaultRequestMatch,
  FaultRuleInfo,
  FaultStatus,
  PathPattern,
  PathPatternInfo,
  StallWatchesFault,
} from './fault-rules.ts';
export { type KubeconfigOptions, kubeconfigYaml } from './kubeconfig.ts';
export type { ApiServerOptions, FaultAdminOptions } from './options.ts';
export { type Status, statusOf } from './status.ts';
export { KUBERNETES_VERSION } from './version.ts';
