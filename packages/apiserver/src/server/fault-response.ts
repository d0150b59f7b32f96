import type { ServerResponse } from 'node:http';
import type { ErrorDetails } from '@converge/runtime';
import { FaultError, FaultErrorCodes } from './fault-errors.ts';
import type { FaultStatus } from './fault-rules.ts';
import type { RequestTarget } from './request-info.ts';
import { writeValue } from './respond.ts';
import { statusOf } from './status.ts';

/** The response header naming the rule that injected a fault (for debugging and tests). */
export const FAULT_HEADER = 'X-Converge-Fault';

/** What an injected failure needs to know about the rule and the request. */
export interface InjectedFailure {
  readonly ruleId: string;
  readonly status: FaultStatus;
  readonly retryAfterSeconds: number | undefined;
  readonly target: RequestTarget;
  /** The request's `resourceVersion` parameter ('' when unset). */
  readonly resourceVersion: string;
}

/** `details` as kube-apiserver fills them for an object: name, group and resource. */
function objectDetails(target: RequestTarget): ErrorDetails {
  if (target.kind !== 'resource') return {};
  return {
    ...(target.name === undefined ? {} : { name: target.name }),
    group: target.group,
    kind: target.resource,
  };
}

/**
 * The error a `failRatio` rule answers with, worded as kube-apiserver words it and marked as
 * injected: 409 Conflict, 410 Expired, 429 TooManyRequests (with `details.retryAfterSeconds`), 500
 * InternalError, 503 ServiceUnavailable.
 */
export function injectedError(failure: InjectedFailure): FaultError {
  const { ruleId, status, retryAfterSeconds, target } = failure;
  const mark = `injected fault ${ruleId}`;
  const retry = retryAfterSeconds === undefined ? {} : { retryAfterSeconds };
  const code = FaultErrorCodes.INJECTED;
  switch (status) {
    case 409: {
      const what =
        target.kind !== 'resource'
          ? 'the object'
          : target.name === undefined
            ? target.resource
            : `${target.resource} "${target.name}"`;
      return new FaultError(
        code,
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${what}: the object has been modified; please apply your changes to the latest version and try again (${mark})`,
        { details: objectDetails(target) },
      );
    }
    case 410:
      return new FaultError(
        code,
        410,
        'Expired',
        `too old resource version: ${failure.resourceVersion === '' ? '0' : failure.resourceVersion} (${mark})`,
      );
    case 429:
      return new FaultError(
        code,
        429,
        'TooManyRequests',
        `Too many requests, please try again later. (${mark})`,
        {
          details: retry,
        },
      );
    case 500:
      return new FaultError(code, 500, 'InternalError', `Internal error occurred: ${mark}`);
    case 503:
      return new FaultError(
        code,
        503,
        'ServiceUnavailable',
        `The server is currently unable to handle the request (${mark})`,
        { details: retry },
      );
  }
}

/**
 * Answers a request with an injected failure: the error's `metav1.Status` with its HTTP code,
 * `Retry-After` when the rule sets it, and {@link FAULT_HEADER}. A watch answered with 410 gets
 * what kube-apiserver sends for a too-old resourceVersion instead: a 200 whose only event is an
 * ERROR carrying the Status, then a clean end.
 */
export function writeInjected(res: ServerResponse, failure: InjectedFailure, watch: boolean): void {
  if (res.headersSent || res.destroyed) return;
  const status = statusOf(injectedError(failure));
  res.setHeader(FAULT_HEADER, failure.ruleId);
  if (watch && failure.status === 410) {
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-cache, private',
      'Transfer-Encoding': 'chunked',
    });
    res.end(`${JSON.stringify({ type: 'ERROR', object: status })}\n`);
    return;
  }
  if (failure.retryAfterSeconds !== undefined)
    res.setHeader('Retry-After', String(failure.retryAfterSeconds));
  writeValue(res, status.code, status);
}
