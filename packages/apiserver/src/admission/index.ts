/**
 * Admission webhooks for the embedded API server: the webhooks of stored
 * `admissionregistration.k8s.io/v1` Mutating- and ValidatingWebhookConfigurations are matched
 * against each write (rules, namespace and object selectors) and called over HTTPS with an
 * `AdmissionReview` v1, as kube-apiserver calls them.
 *
 * - {@link WebhookAdmission} — `mutate` before schema validation, `validate` after it
 * - `matchConditions` (CEL) decide, after rules and selectors, whether a webhook is called;
 *   {@link matchConditionCauses} validates them when a configuration is written
 * - {@link AdmissionDeniedError}, {@link AdmissionWebhookError},
 *   {@link AdmissionMatchConditionError} — denials, failed calls, failed match conditions
 * - {@link localServiceResolver} — `clientConfig.service` reached on 127.0.0.1
 * - {@link invalidateOnChange} — drops the cached configurations when a store watch sees a change
 * - {@link PolicyAdmission} — ValidatingAdmissionPolicies and their bindings (policy/), evaluated
 *   between schema validation and validating webhooks; {@link policyCauses} and
 *   {@link bindingCauses} validate them when written
 *
 * @module
 */
export {
  endpointOf,
  type LocalWebhookDispatch,
  type LocalWebhooks,
  localServiceResolver,
  postReview,
  postReviewLocally,
  type WebhookEndpoint,
  type WebhookServiceResolver,
} from './call.ts';
export {
  AdmissionDeniedError,
  AdmissionErrorCodes,
  AdmissionMatchConditionError,
  AdmissionWebhookError,
} from './errors.ts';
export { invalidateOnChange } from './follow.ts';
export {
  MAX_MATCH_CONDITIONS,
  type MatchCondition,
  matchConditionCauses,
  matchConditionsHold,
} from './match-conditions.ts';
export {
  bindingCauses,
  defaultBinding,
  defaultPolicy,
  type ParamResolver,
  type ParamSource,
  POLICY_AUDIT_CHANNEL,
  PolicyAdmission,
  type PolicyAdmissionOptions,
  type PolicyAuditEvent,
  PolicyDeniedError,
  PolicyErrorCodes,
  policyCauses,
} from './policy/index.ts';
export type { AdmissionAttributes, JsonObject, UserInfo, WebhookService } from './types.ts';
export {
  type Warn,
  WebhookAdmission,
  type WebhookAdmissionOptions,
  type WebhookConfigurationKind,
} from './webhook-admission.ts';
