import { BackendError, type ErrorDetails, InternalError, isConvergeError } from '@converge/runtime';
import { HttpStatusError } from './errors.ts';

/** A Kubernetes `metav1.Status` as it travels on the wire. */
export interface Status {
  readonly kind: 'Status';
  readonly apiVersion: 'v1';
  readonly metadata: Record<string, never>;
  readonly status: 'Success' | 'Failure';
  readonly message?: string;
  readonly reason?: string;
  readonly details?: Record<string, unknown>;
  readonly code: number;
}

/** The wire form of error details: only fields that are set, causes as Kubernetes writes them. */
function wireDetails(details: ErrorDetails | undefined): Record<string, unknown> | undefined {
  if (details === undefined) return undefined;
  const out: Record<string, unknown> = {};
  if (details.name !== undefined && details.name !== '') out.name = details.name;
  if (details.group !== undefined && details.group !== '') out.group = details.group;
  if (details.kind !== undefined && details.kind !== '') out.kind = details.kind;
  if (details.uid !== undefined && details.uid !== '') out.uid = details.uid;
  if (details.causes !== undefined && details.causes.length > 0) {
    out.causes = details.causes.map((c) => {
      const cause: Record<string, string> = { reason: c.reason, message: c.message };
      if (c.field !== '') cause.field = c.field;
      return cause;
    });
  }
  if (details.retryAfterSeconds !== undefined) out.retryAfterSeconds = details.retryAfterSeconds;
  return out;
}

/** Whether an error is one of the runtime's backend errors (also from another copy of the package). */
function isBackendError(error: unknown): error is BackendError {
  return (
    error instanceof BackendError ||
    (isConvergeError(error) &&
      typeof (error as { status?: unknown }).status === 'number' &&
      typeof (error as { reason?: unknown }).reason === 'string')
  );
}

/** The reason Kubernetes gives an HTTP code, for errors that carry a status but no reason. */
const REASONS: Readonly<Record<number, string>> = {
  400: 'BadRequest',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  410: 'Expired',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
};

/** A Converge error from another module with an HTTP `status` (4xx) but no Kubernetes reason. */
function statusOnly(error: unknown): { status: number; reason: string; message: string } | undefined {
  if (!isConvergeError(error)) return undefined;
  const status = (error as { status?: unknown }).status;
  if (typeof status !== 'number') return undefined;
  const reason = REASONS[status];
  return reason === undefined ? undefined : { status, reason, message: error.message };
}

/**
 * The `metav1.Status` of a failure: backend errors keep their code, reason, message and details
 * (NotFound 404, Conflict 409, Invalid 422 with causes, Expired 410, …), HTTP errors theirs (401,
 * 405, 406, 413, 415); anything else is a 500 `Internal error occurred: <message>`.
 */
export function statusOf(error: unknown): Status {
  if (isBackendError(error) || error instanceof HttpStatusError) {
    const details = wireDetails(error.details);
    const base = {
      kind: 'Status' as const,
      apiVersion: 'v1' as const,
      metadata: {},
      status: 'Failure' as const,
      message: error.message,
      // an empty reason (StatusReasonUnknown) is omitted, as Go's `omitempty` does
      ...((error.reason as string) === '' ? {} : { reason: error.reason }),
    };
    // Kubernetes omits details for errors without any (401, 406, 415) and sends {} for unknown paths.
    return details === undefined ? { ...base, code: error.status } : { ...base, details, code: error.status };
  }
  const plain = statusOnly(error);
  if (plain !== undefined) {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: plain.message,
      reason: plain.reason,
      code: plain.status,
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  const internal = new InternalError(`Internal error occurred: ${message}`);
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: internal.message,
    reason: internal.reason,
    details: { causes: [{ message }] },
    code: 500,
  };
}

/** The `Success` Status of a delete: `details` name the deleted object by resource and uid. */
export function successStatus(details: { name: string; group: string; kind: string; uid?: string }): Status {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: wireDetails(details) ?? {},
    code: 200,
  };
}
