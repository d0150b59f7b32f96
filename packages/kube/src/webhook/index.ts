/**
 * Webhooks served by an operator: admission (validating and mutating) and conversion, over HTTPS.
 *
 * - {@link WebhookServer} — the HTTPS server (a `Runnable`): TLS 1.2+, certificate files reloaded
 *   on change or a generated development CA, body limit, per-request timeout.
 * - Admission handlers: a {@link Validator} answers {@link allowed} or {@link denied}; a
 *   {@link Defaulter} returns the defaulted object (or {@link mutated} with warnings) and the server
 *   answers with the JSON patch ({@link createJsonPatch}).
 * - Conversion: a {@link Converter}, usually {@link hubAndSpoke}.
 * - {@link generateWebhookCertificates} — a CA and a serving certificate for development.
 * - {@link webhookConfigurations} — the Mutating/ValidatingWebhookConfiguration and CRD
 *   conversions for a manager's registrations; {@link applyWebhookConfigurations} writes them.
 * - {@link ManagedWebhooks} — managed mode for a real cluster: certificates in a Secret every
 *   replica shares, configurations kept applied.
 *
 * @example
 * const server = new WebhookServer({ host: '127.0.0.1', port: 0, tls: { generate: {} } });
 * server.validating<Website>('/validate-website', {
 *   validate: ({ object }) => ((object?.spec.replicas ?? 1) > 10 ? denied('at most 10 replicas') : allowed()),
 * });
 * void server.start(signal);
 * const { url } = await server.listening();
 * // caBundle: Buffer.from(server.caBundle!).toString('base64'), url: `${url}/validate-website`
 *
 * @module
 */
export {
  type AdmissionOperation,
  type AdmissionRequest,
  type AdmissionResult,
  type AdmissionReviewVersion,
  type AdmissionUserInfo,
  type AdmissionWebhookOptions,
  type AllowedOptions,
  allowed,
  type Converter,
  type Defaulter,
  type DenialOptions,
  denied,
  type GroupVersionKind,
  type GroupVersionResource,
  type HubAndSpokeOptions,
  isAdmissionResult,
  type MutatedResult,
  mutated,
  type SideEffects,
  type Spoke,
  type Validator,
} from '@converge/runtime';
export {
  type AppliedWebhookConfigurations,
  type ApplyOutcome,
  type ApplyWebhookConfigurationsOptions,
  applyCrdConversion,
  applyWebhookConfigurations,
  removeWebhookConfigurations,
} from './apply-configurations.ts';
export {
  type GenerateCertificatesOptions,
  generateWebhookCertificates,
  type WebhookCertificates,
} from './certificates.ts';
export {
  type AdmissionWebhookClientConfig,
  type AdmissionWebhookEntry,
  type CrdConversion,
  encodeCaBundle,
  mutatingWebhookConfigurationType,
  validatingWebhookConfigurationType,
  type WebhookConfiguration,
  type WebhookConfigurations,
  type WebhookConfigurationsOptions,
  type WebhookTarget,
  webhookConfigurations,
} from './configurations.ts';
export { hubAndSpoke } from './conversion.ts';
export {
  WebhookConversionError,
  WebhookHandlerError,
  WebhookListenError,
  WebhookPathError,
  WebhookRequestError,
  WebhookTimeoutError,
  WebhookTlsError,
} from './errors.ts';
export { createJsonPatch } from './json-patch-diff.ts';
export {
  MANAGED_WEBHOOKS_LABEL,
  MANAGED_WEBHOOKS_LABEL_VALUE,
  ManagedWebhooks,
  type ManagedWebhooksOptions,
} from './managed.ts';
export type { WebhookServerOptions } from './options.ts';
export type { WebhookTlsOptions } from './serving-certificate.ts';
export {
  type WebhookInfo,
  WebhookServer,
  type WebhookServerAddress,
  type WebhookType,
} from './webhook-server.ts';
