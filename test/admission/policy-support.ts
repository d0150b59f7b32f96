/** Builders of ValidatingAdmissionPolicy and binding objects for the policy tests. */

export const VAP = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies';
export const VAPB = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings';

/** A rule matching ConfigMaps (core/v1) on the given operations. */
export function configMapRules(
  operations: readonly string[] = ['CREATE', 'UPDATE'],
): Record<string, unknown> {
  return { resourceRules: [{ operations, apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }] };
}

/** A ValidatingAdmissionPolicy for ConfigMaps with `spec` merged in. */
export function policy(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: { matchConstraints: configMapRules(), ...spec },
  };
}

/** A binding of `policyName` with the given actions and extra spec. */
export function binding(
  name: string,
  policyName: string,
  validationActions: readonly string[] = ['Deny'],
  spec: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: { policyName, validationActions, ...spec },
  };
}
