/**
 * What an operator's webhooks are, independent of the server that serves them: admission handlers
 * ({@link Validator}, {@link Defaulter}) with their answers ({@link allowed}, {@link denied},
 * {@link mutated}), and the {@link Converter} a conversion webhook runs. `@converge/kube`'s
 * `WebhookServer` serves them over HTTPS.
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
export type { Converter, HubAndSpokeOptions, Spoke } from './conversion.ts';
