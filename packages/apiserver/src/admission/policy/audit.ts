/**
 * What ValidatingAdmissionPolicies decide for one binding, turned into actions (Deny, Warn,
 * Audit), and the audit annotations of a request published — the embedded server keeps no audit
 * log, so they go to a `diagnostics_channel` and an optional hook.
 */
import { channel } from 'node:diagnostics_channel';
import type { AdmissionAttributes } from '../types.ts';
import type { Decision } from './evaluate.ts';

/** The `diagnostics_channel` on which the audit annotations of each admitted or denied request are published. */
export const POLICY_AUDIT_CHANNEL = 'converge:apiserver:admission:policy-audit';

/**
 * What the policies of one request want in the audit log (the embedded server keeps none): the
 * `<policy>/<key>` annotations of `auditAnnotations`, and
 * `validation.policy.admission.k8s.io/validation_failure` for bindings with the Audit action.
 */
export interface PolicyAuditEvent {
  readonly operation: AdmissionAttributes['operation'];
  readonly resource: AdmissionAttributes['resource'];
  readonly subResource: string;
  readonly namespace: string;
  readonly name: string;
  readonly annotations: Readonly<Record<string, string>>;
}

const VALIDATION_FAILURE = 'validation.policy.admission.k8s.io/validation_failure';

/** A denial to report: the first one of a request is the error. */
export interface Denial {
  readonly policy: string;
  readonly binding: string | undefined;
  readonly message: string;
  readonly reason: string | undefined;
}

/**
 * Applies a binding's `validationActions` to one failed validation: Deny collects a denial, Warn
 * a `Warning` header worded as kube's, Audit the `validation_failure` annotation (the first one
 * of the request is kept, as kube refuses to overwrite an audit annotation).
 */
export function applyActions(
  actions: readonly string[],
  policy: string,
  binding: string,
  decision: Decision,
  into: {
    readonly denied: Denial[];
    readonly annotations: Record<string, string>;
    readonly warn: (text: string) => void;
  },
): void {
  for (const action of actions) {
    if (action === 'Deny') {
      into.denied.push({ policy, binding, message: decision.message, reason: decision.reason });
    } else if (action === 'Warn') {
      into.warn(
        `Validation failed for ValidatingAdmissionPolicy '${policy}' with binding '${binding}': ${decision.message}`,
      );
    } else if (action === 'Audit' && into.annotations[VALIDATION_FAILURE] === undefined) {
      into.annotations[VALIDATION_FAILURE] = JSON.stringify([
        {
          message: decision.message,
          policy,
          binding,
          expressionIndex: decision.index,
          validationActions: actions,
        },
      ]);
    }
  }
}

/** Publishes a request's audit annotations (nothing when there are none). */
export function publishAudit(
  attributes: AdmissionAttributes,
  annotations: Readonly<Record<string, string>>,
  onAudit: ((event: PolicyAuditEvent) => void) | undefined,
): void {
  if (Object.keys(annotations).length === 0) return;
  const event: PolicyAuditEvent = {
    operation: attributes.operation,
    resource: attributes.resource,
    subResource: attributes.subResource,
    namespace: attributes.namespace,
    name: attributes.name,
    annotations,
  };
  const audit = channel(POLICY_AUDIT_CHANNEL);
  if (audit.hasSubscribers) audit.publish(event);
  onAudit?.(event);
}
