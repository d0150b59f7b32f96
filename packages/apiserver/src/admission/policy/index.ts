/**
 * ValidatingAdmissionPolicy (`admissionregistration.k8s.io/v1`) for the embedded API server:
 * policies and their bindings validated when written ({@link policyCauses},
 * {@link bindingCauses}), compiled once per change, and evaluated on admission
 * ({@link PolicyAdmission}) after schema validation and before validating webhooks.
 *
 * @module
 */

export { POLICY_AUDIT_CHANNEL, type PolicyAuditEvent } from './audit.ts';
export { bindingCauses, defaultBinding, defaultPolicy, policyCauses } from './causes.ts';
export { PolicyDeniedError, PolicyErrorCodes } from './errors.ts';
export type { ParamResolver, ParamSource } from './params.ts';
export { PolicyAdmission, type PolicyAdmissionOptions } from './policy-admission.ts';
