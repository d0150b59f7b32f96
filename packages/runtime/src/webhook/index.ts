/**
 * What an operator's webhooks are, independent of the server that serves them: admission handlers
 * ({@link Validator}, {@link Defaulter}) with their answers ({@link allowed}, {@link denied},
 * {@link mutated}), and the {@link Converter} a conversion webhook runs. `@converge/kube`'s
 * `WebhookServer` serves them over HTTPS.
 *
 * Registered per kind with `manager.webhook(type)` (a {@link WebhookBuilder}); `manager.webhooks`
 * lists the {@link WebhookRegistration}s, from which `@converge/kube` makes webhook configurations.
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
  type Defaulter,
  type DenialOptions,
  denied,
  type GroupVersionKind,
  isAdmissionResult,
  isMutatedResult,
  type MutatedResult,
  mutated,
  type SideEffects,
  type Validator,
} from './admission.ts';
export { WebhookBuilder } from './builder.ts';
export type { Converter, HubAndSpokeOptions, Spoke } from './conversion.ts';
export {
  ConverterNotFoundError,
  WebhookBuilderError,
  WebhookConflictError,
  WebhookErrorCodes,
} from './errors.ts';
export {
  type AdmissionWebhookRegistrationOptions,
  CONVERSION_PATH,
  type ConversionWebhookRegistration,
  type MatchCondition,
  type MutatingWebhookRegistration,
  mutatePath,
  type ResolvedAdmissionWebhookOptions,
  type ValidatingWebhookRegistration,
  validatePath,
  type WebhookKind,
  type WebhookRegistration,
  webhookName,
} from './registration.ts';
export { type WebhookHost, WebhookRegistry } from './registry.ts';
