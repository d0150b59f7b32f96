/**
 * `@converge/kube`: the Backend over the Kubernetes HTTP API. It works unchanged against a real
 * cluster and against Converge's embedded API server, and passes the same Backend conformance
 * suite as the in-process store.
 *
 * - Config: {@link loadKubeconfig} (KUBECONFIG files merged as kubectl merges them, contexts,
 *   namespaces, tokens, token files, client certificates, CA data or files,
 *   `insecure-skip-tls-verify`, exec credential plugins), {@link inClusterConfig} (a pod's service
 *   account) and {@link loadConfig} (kubeconfig if there is one, else in-cluster). A broken
 *   kubeconfig throws a {@link KubeconfigError} naming the file and the field.
 * - {@link KubeBackend}: one undici keep-alive pool per cluster with deliberate timeouts (no 300 s
 *   body timeout on watches; stall detection instead), paginated and incrementally decoded lists,
 *   watches with bookmarks, random 5–10 minute server timeouts, a line cap, typed ERROR events and
 *   `sendInitialEvents`, every write verb with field managers, 429 handled with Retry-After, and
 *   every error typed from `metav1.Status`. Discovery resolves `apiVersion` + `kind` to types.
 * - Webhooks: {@link WebhookServer} serves admission webhooks (validators answering `allowed()` or
 *   `denied()`, defaulters answered with a JSON patch) and conversion webhooks ({@link hubAndSpoke})
 *   over HTTPS, with certificates reloaded from files or generated for development
 *   ({@link generateWebhookCertificates}); {@link webhookConfigurations} turns a manager's
 *   registrations into webhook configurations and CRD conversions ({@link applyWebhookConfigurations}
 *   writes them), and {@link ManagedWebhooks} keeps certificates in a shared Secret and the
 *   configurations applied on a real cluster, without cert-manager.
 * - Kinds: {@link defineKind} declares a custom resource from TypeBox schemas ({@link Type},
 *   re-exported): its object type is derived from them ({@link ObjectOfKind}), {@link crdsOf}
 *   generates its structural CRD, {@link kindOf} finds it from a resource type, and
 *   {@link importCrd} writes such a module from a CRD you do not own (`converge import`). Errors
 *   `CONVERGE_ERR_KIND_*` ({@link KindErrorCodes}).
 * - Manifests: {@link generateManifests} turns a manager's recorded permissions and kinds into
 *   the deploy artefacts `converge manifests` writes (Namespace, ServiceAccount, RBAC, CRDs, a
 *   hardened Deployment, Services, a Dockerfile), laid out by {@link configFiles} (plain YAML and
 *   a kustomize base) and {@link helmChart}.
 * - Errors of this package: {@link KubeErrorCodes} (`CONVERGE_ERR_KUBE_*`); API errors are the
 *   runtime's backend errors (`NotFoundError`, `ConflictError`, `ExpiredError`, …).
 *
 * @example
 * import { Informer } from '@converge/runtime';
 * import { KubeBackend, loadKubeconfig } from '@converge/kube';
 *
 * const backend = new KubeBackend({ config: loadKubeconfig({ env: process.env }), fieldManager: 'my-operator' });
 * await backend.discover();
 * const informer = new Informer({ backend, type: backend.resolveType('v1', 'ConfigMap')! });
 * void informer.start(signal);
 * await informer.waitForSync(signal);
 *
 * @module
 */
export {
  Discovery,
  KubeBackend,
  type KubeBackendOptions,
  type KubeBackendStats,
  resourcePath,
} from './backend/index.ts';
export {
  type ExecConfig,
  type ExecEnvVar,
  type InClusterOptions,
  inClusterConfig,
  type KubeAuthConfig,
  type KubeConfig,
  type KubeTlsConfig,
  type LoadKubeconfigOptions,
  loadConfig,
  loadKubeconfig,
  SERVICE_ACCOUNT_DIR,
} from './config/index.ts';
export { LineDecoder, ListDecoder } from './decode/index.ts';
export {
  ExecCredentialError,
  InClusterConfigError,
  KubeconfigError,
  KubeconfigNotFoundError,
  KubeErrorCodes,
  ResponseDecodeError,
  UnauthorizedError,
  WatchLineTooLongError,
  WatchStalledError,
} from './errors.ts';
export { errorFromStatus, type Status } from './http/index.ts';
export {
  Condition,
  Conditions,
  CrdImportError,
  crdsOf,
  defineKind,
  type ImportCrdOptions,
  IntOrString,
  importCrd,
  type Kind,
  KindConflictError,
  KindErrorCodes,
  type KindObject,
  type KindOptions,
  KindOptionsError,
  KindSchemaError,
  type KindValidation,
  kindOf,
  type ObjectOfKind,
  type PrinterColumn,
  type ScaleOptions,
  type Static,
  type TCondition,
  type TSchema,
  Type,
} from './kind/index.ts';
export {
  configFiles,
  DEFAULT_RESOURCES,
  dockerfileOf,
  dockerignoreOf,
  type FencedResourceRule,
  fencedResourceRules,
  fencingPolicy,
  GENERATED_HEADER,
  generateManifests,
  helmChart,
  type Manifest,
  type ManifestOptions,
  type ManifestResources,
  type ManifestSet,
  type ManifestSource,
  manifestLabels,
  type PermissionSource,
  POD_NAME_EXTRA,
  type PolicyRule,
  policyRules,
  type ResolvedManifestOptions,
  resolveManifestOptions,
  runArgs,
  toYaml,
} from './manifests/index.ts';
export {
  type AdmissionOperation,
  type AdmissionRequest,
  type AdmissionResult,
  type AdmissionReviewVersion,
  type AdmissionUserInfo,
  type AdmissionWebhookClientConfig,
  type AdmissionWebhookEntry,
  type AdmissionWebhookOptions,
  type AllowedOptions,
  type AppliedWebhookConfigurations,
  type ApplyOutcome,
  type ApplyWebhookConfigurationsOptions,
  allowed,
  applyCrdConversion,
  applyWebhookConfigurations,
  type Converter,
  type CrdConversion,
  createJsonPatch,
  type Defaulter,
  type DenialOptions,
  denied,
  encodeCaBundle,
  type GenerateCertificatesOptions,
  type GroupVersionKind,
  type GroupVersionResource,
  generateWebhookCertificates,
  type HubAndSpokeOptions,
  hubAndSpoke,
  isAdmissionResult,
  MANAGED_WEBHOOKS_LABEL,
  MANAGED_WEBHOOKS_LABEL_VALUE,
  ManagedWebhooks,
  type ManagedWebhooksOptions,
  type MutatedResult,
  mutated,
  mutatingWebhookConfigurationType,
  removeWebhookConfigurations,
  type SideEffects,
  type Spoke,
  type Validator,
  validatingWebhookConfigurationType,
  type WebhookCertificates,
  type WebhookConfiguration,
  type WebhookConfigurations,
  type WebhookConfigurationsOptions,
  WebhookConversionError,
  WebhookHandlerError,
  type WebhookInfo,
  WebhookListenError,
  WebhookPathError,
  WebhookRequestError,
  WebhookServer,
  type WebhookServerAddress,
  type WebhookServerOptions,
  type WebhookTarget,
  WebhookTimeoutError,
  WebhookTlsError,
  type WebhookTlsOptions,
  type WebhookType,
  webhookConfigurations,
} from './webhook/index.ts';
