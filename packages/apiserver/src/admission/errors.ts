import { ConvergeError, type ErrorDetails } from '@converge/runtime';

/** Stable codes of admission errors (never reused). */
export const AdmissionErrorCodes = {
  /** A webhook answered `allowed: false` (status code and reason are the webhook's). */
  DENIED: 'CONVERGE_ERR_APISERVER_ADMISSION_DENIED',
  /** A webhook with `failurePolicy: Fail` could not be called or answered badly (500). */
  WEBHOOK_FAILED: 'CONVERGE_ERR_APISERVER_ADMISSION_WEBHOOK_FAILED',
  /** A webhook's `matchConditions` failed to evaluate under `failurePolicy: Fail` (403). */
  MATCH_CONDITION_FAILED: 'CONVERGE_ERR_APISERVER_ADMISSION_MATCH_FAILED',
} as const;

/**
 * A webhook denied the request: `admission webhook "NAME" denied the request: MESSAGE`, with the
 * webhook's `status.code` (at least 400, default 400), reason and details, as kube-apiserver's
 * `ToStatusErr`.
 */
export class AdmissionDeniedError extends ConvergeError {
  readonly status: number;
  readonly reason: string;
  readonly details: ErrorDetails;
  /** The denying webhook's name. */
  readonly webhook: string;

  constructor(webhook: string, result: Readonly<Record<string, unknown>> | undefined) {
    const code = typeof result?.code === 'number' && result.code >= 400 ? result.code : 400;
    const message = typeof result?.message === 'string' ? result.message : '';
    const reason = typeof result?.reason === 'string' ? result.reason : '';
    const deniedBy = `admission webhook ${JSON.stringify(webhook)} denied the request`;
    const text =
      message !== ''
        ? `${deniedBy}: ${message}`
        : reason !== ''
          ? `${deniedBy}: ${reason}`
          : `${deniedBy} without explanation`;
    super(AdmissionErrorCodes.DENIED, text);
    this.status = code;
    this.reason = reason;
    this.webhook = webhook;
    this.details = isRecord(result?.details) ? (result.details as ErrorDetails) : {};
  }
}

/**
 * A call to a webhook failed under `failurePolicy: Fail`: a 500 `Internal error occurred: failed
 * calling webhook "NAME": …`, as kube-apiserver reports it.
 */
export class AdmissionWebhookError extends ConvergeError {
  readonly status = 500;
  readonly reason = 'InternalError';
  readonly details: ErrorDetails = {};
  /** The failing webhook's name. */
  readonly webhook: string;

  constructor(webhook: string, problem: string, options?: { cause?: unknown }) {
    super(
      AdmissionErrorCodes.WEBHOOK_FAILED,
      `Internal error occurred: failed calling webhook ${JSON.stringify(webhook)}: ${problem}`,
      options,
    );
    this.webhook = webhook;
  }
}

/**
 * A webhook's `matchConditions` could not be evaluated under `failurePolicy: Fail`: a 403
 * `<resource> "<name>" is forbidden: expression '…' resulted in error: …`, as kube-apiserver
 * answers (the webhook is not called).
 */
export class AdmissionMatchConditionError extends ConvergeError {
  readonly status = 403;
  readonly reason = 'Forbidden';
  readonly details: ErrorDetails;
  /** The webhook whose conditions failed. */
  readonly webhook: string;

  constructor(
    webhook: string,
    request: {
      readonly resource: { readonly group: string; readonly resource: string };
      readonly name: string;
    },
    problem: string,
  ) {
    const { group, resource } = request.resource;
    const qualified = group === '' ? resource : `${resource}.${group}`;
    const subject = request.name === '' ? qualified : `${qualified} ${JSON.stringify(request.name)}`;
    super(AdmissionErrorCodes.MATCH_CONDITION_FAILED, `${subject} is forbidden: ${problem}`);
    this.webhook = webhook;
    this.details = { name: request.name, group, kind: resource };
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
