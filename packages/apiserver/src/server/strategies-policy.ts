import { bindingCauses, defaultBinding, defaultPolicy, policyCauses } from '../admission/index.ts';
import type { MutableObject, Strategy } from './api-resource.ts';

/**
 * admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy: kube's defaults, then its validation
 * — every CEL expression is compiled and a broken one is a 422 field error.
 */
export const validatingAdmissionPolicyStrategy: Strategy = {
  prepareForCreate(object: MutableObject) {
    defaultPolicy(object);
    return policyCauses(object);
  },
  prepareForUpdate(object: MutableObject) {
    defaultPolicy(object);
    return policyCauses(object);
  },
};

/** admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding: defaults and validation. */
export const validatingAdmissionPolicyBindingStrategy: Strategy = {
  prepareForCreate(object: MutableObject) {
    defaultBinding(object);
    return bindingCauses(object);
  },
  prepareForUpdate(object: MutableObject) {
    defaultBinding(object);
    return bindingCauses(object);
  },
};
