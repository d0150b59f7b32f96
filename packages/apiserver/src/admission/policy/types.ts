import type { JsonObject } from '../types.ts';

/** One rule of `matchConstraints.resourceRules` (`NamedRuleWithOperations`). */
export interface NamedRule {
  readonly operations?: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly apiVersions?: readonly string[];
  readonly resources?: readonly string[];
  /** `*` (default), `Cluster` or `Namespaced`. */
  readonly scope?: string;
  /** Only these object names match (empty: every name). */
  readonly resourceNames?: readonly string[];
}

/** `spec.matchConstraints` of a policy, `spec.matchResources` of a binding (`MatchResources`). */
export interface MatchResources {
  readonly namespaceSelector?: JsonObject;
  readonly objectSelector?: JsonObject;
  readonly resourceRules?: readonly NamedRule[];
  readonly excludeResourceRules?: readonly NamedRule[];
  /** `Equivalent` (default) or `Exact`; the embedded server serves one version per kind, so both match alike. */
  readonly matchPolicy?: string;
}

/** A `ValidatingAdmissionPolicy` spec as stored (`admissionregistration.k8s.io/v1`). */
export interface PolicySpec {
  readonly paramKind?: { readonly apiVersion?: string; readonly kind?: string };
  readonly matchConstraints?: MatchResources;
  readonly validations?: readonly {
    readonly expression?: string;
    readonly message?: string;
    readonly messageExpression?: string;
    readonly reason?: string;
  }[];
  readonly failurePolicy?: 'Fail' | 'Ignore';
  readonly auditAnnotations?: readonly { readonly key?: string; readonly valueExpression?: string }[];
  readonly matchConditions?: readonly { readonly name?: string; readonly expression?: string }[];
  readonly variables?: readonly { readonly name?: string; readonly expression?: string }[];
}

/** `spec.paramRef` of a binding. */
export interface ParamRef {
  readonly name?: string;
  readonly namespace?: string;
  readonly selector?: JsonObject;
  /** `Allow` or `Deny` (required by validation). */
  readonly parameterNotFoundAction?: string;
}

/** A `ValidatingAdmissionPolicyBinding` spec as stored. */
export interface BindingSpec {
  readonly policyName?: string;
  readonly paramRef?: ParamRef;
  readonly matchResources?: MatchResources;
  readonly validationActions?: readonly string[];
}

/** A stored object of either kind: metadata plus spec. */
export interface PolicyObject<S> {
  readonly metadata?: { readonly name?: string; readonly uid?: string; readonly resourceVersion?: string };
  readonly spec?: S;
}

/** One audit annotation a policy published for a request: `<policy>/<key>` → value. */
export interface AuditAnnotation {
  readonly key: string;
  readonly value: string;
}
