import { ConvergeError, type ErrorDetails } from '@converge/runtime';
import type { AdmissionAttributes } from '../types.ts';

/** Stable codes of ValidatingAdmissionPolicy errors (never reused). */
export const PolicyErrorCodes = {
  /** A policy binding with `validationActions: [Deny]` failed the request (or its configuration failed under Fail). */
  DENIED: 'CONVERGE_ERR_APISERVER_ADMISSION_POLICY_DENIED',
} as const;

const CODES: Readonly<Record<string, number>> = {
  Forbidden: 403,
  Unauthorized: 401,
  RequestEntityTooLarge: 413,
  Invalid: 422,
};

/**
 * A ValidatingAdmissionPolicy denied the request, as kube-apiserver answers it:
 * `<resource> "<name>" is forbidden: ValidatingAdmissionPolicy 'P' with binding 'B' denied
 * request: MESSAGE`, with the validation's `reason` (default Invalid) and its code (422, 403, 401
 * or 413), and the message again as the one cause (kubectl prints `The <resource> "<name>" is
 * invalid: : …` for a 422).
 */
export class PolicyDeniedError extends ConvergeError {
  readonly status: number;
  readonly reason: string;
  readonly details: ErrorDetails;
  readonly policy: string;
  readonly binding: string | undefined;

  constructor(
    attributes: AdmissionAttributes,
    denial: { policy: string; binding: string | undefined; message: string; reason: string | undefined },
  ) {
    const text =
      denial.binding === undefined
        ? `ValidatingAdmissionPolicy '${denial.policy}' denied request: ${denial.message}`
        : `ValidatingAdmissionPolicy '${denial.policy}' with binding '${denial.binding}' denied request: ${denial.message}`;
    const { group, resource } = attributes.resource;
    const qualified = group === '' ? resource : `${resource}.${group}`;
    const name = nameOf(attributes);
    super(PolicyErrorCodes.DENIED, `${qualified} ${JSON.stringify(name)} is forbidden: ${text}`);
    this.reason = denial.reason ?? 'Invalid';
    this.status = CODES[this.reason] ?? 422;
    this.policy = denial.policy;
    this.binding = denial.binding;
    this.details = { name, group, kind: resource, causes: [{ reason: '', message: text, field: '' }] };
  }
}

/** kube's name of the request for messages: its name, else the object's generateName, else `Unknown`. */
function nameOf(attributes: AdmissionAttributes): string {
  if (attributes.name !== '') return attributes.name;
  const metadata = (attributes.object?.metadata ?? {}) as { name?: unknown; generateName?: unknown };
  if (typeof metadata.name === 'string' && metadata.name !== '') return metadata.name;
  if (typeof metadata.generateName === 'string' && metadata.generateName !== '') return metadata.generateName;
  return 'Unknown';
}
