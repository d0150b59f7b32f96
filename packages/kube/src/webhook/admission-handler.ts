import type { Clock, JsonPatchOperation, KubeObject, Logger } from '@converge/runtime';
import {
  type AdmissionResult,
  allowed,
  type Defaulter,
  denied,
  isAdmissionResult,
  isMutatedResult,
  type SideEffects,
  type Validator,
} from '@converge/runtime';
import {
  admissionReviewResponse,
  type DecodedAdmissionRequest,
  decodeAdmissionReview,
} from './admission-review.ts';
import { WebhookHandlerError, WebhookTimeoutError } from './errors.ts';
import { createJsonPatch } from './json-patch-diff.ts';
import { isJsonObject, type JsonObject } from './review-decode.ts';
import { messageOf, type Settled, settle } from './settle.ts';

/** A registered admission webhook. */
export type AdmissionRoute =
  | {
      readonly type: 'validating';
      readonly path: string;
      readonly sideEffects: SideEffects;
      readonly validator: Validator<KubeObject>;
    }
  | {
      readonly type: 'mutating';
      readonly path: string;
      readonly sideEffects: SideEffects;
      readonly defaulter: Defaulter<KubeObject>;
    };

/** What answering one review needs besides the review. */
export interface AnswerContext {
  readonly timeoutMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Aborts when the server stops. */
  readonly stop: AbortSignal;
}

interface Answer {
  readonly result: AdmissionResult;
  readonly patch?: readonly JsonPatchOperation[];
}

/** A denial for a handler that failed, logged with its error's code. */
function failed(
  error: WebhookHandlerError | WebhookTimeoutError,
  request: DecodedAdmissionRequest,
  logger: Logger,
): Answer {
  const fields = {
    err: error,
    code: error.code,
    uid: request.uid,
    operation: request.operation,
    namespace: request.namespace,
    name: request.name,
  };
  if (error instanceof WebhookTimeoutError) {
    logger.warn(fields, 'Admission handler timed out');
    return { result: denied(error.message, { code: 504, reason: 'Timeout' }) };
  }
  logger.error(fields, 'Admission handler failed');
  return { result: denied(error.message, { code: 500, reason: 'InternalError' }) };
}

function unsettled(route: AdmissionRoute, outcome: Settled<unknown>, timeoutMs: number) {
  if (outcome.kind === 'timeout') return new WebhookTimeoutError(route.path, timeoutMs);
  if (outcome.kind === 'threw') {
    return new WebhookHandlerError(route.path, `the handler threw: ${messageOf(outcome.error)}`, {
      cause: outcome.error,
    });
  }
  return undefined;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value;
}

async function validate(
  route: Extract<AdmissionRoute, { type: 'validating' }>,
  request: DecodedAdmissionRequest,
  context: AnswerContext,
): Promise<Answer> {
  const outcome = await settle((signal) => route.validator.validate({ ...request, signal }), {
    ...context,
    reason: () => new WebhookTimeoutError(route.path, context.timeoutMs),
  });
  const failure = unsettled(route, outcome, context.timeoutMs);
  if (failure !== undefined) return failed(failure, request, context.logger);
  const value = (outcome as { value: unknown }).value;
  if (isAdmissionResult(value)) return { result: value };
  const problem = `the validator returned ${describeValue(value)}, not allowed() or denied()`;
  return failed(new WebhookHandlerError(route.path, problem), request, context.logger);
}

/** The handler's object as plain JSON (undefined members dropped, dates as strings), or a problem. */
function asJson(value: unknown): { json: JsonObject } | { problem: string } {
  try {
    const json: unknown = JSON.parse(JSON.stringify(value));
    return isJsonObject(json) ? { json } : { problem: `the defaulter returned ${describeValue(value)}` };
  } catch (error) {
    return { problem: `the defaulter's object is not JSON: ${messageOf(error)}` };
  }
}

async function mutate(
  route: Extract<AdmissionRoute, { type: 'mutating' }>,
  request: DecodedAdmissionRequest,
  context: AnswerContext,
): Promise<Answer> {
  const original = request.object;
  // controller-runtime's defaulters admit DELETE unchanged; CONNECT has no object to default.
  if (original === null || request.operation === 'DELETE' || request.operation === 'CONNECT') {
    return { result: allowed() };
  }
  const copy = structuredClone(original);
  const outcome = await settle(
    (signal) => route.defaulter.default(copy, { ...request, object: copy, signal }),
    {
      ...context,
      reason: () => new WebhookTimeoutError(route.path, context.timeoutMs),
    },
  );
  const failure = unsettled(route, outcome, context.timeoutMs);
  if (failure !== undefined) return failed(failure, request, context.logger);
  const value = (outcome as { value: unknown }).value;
  if (isAdmissionResult(value)) return { result: value };
  const object = value === undefined ? copy : isMutatedResult(value) ? value.object : value;
  const json = asJson(object);
  if ('problem' in json) {
    return failed(new WebhookHandlerError(route.path, json.problem), request, context.logger);
  }
  const warnings = isMutatedResult(value) ? value.warnings : [];
  return { result: allowed({ warnings }), patch: createJsonPatch(original, json.json) };
}

/**
 * Answers one `AdmissionReview` body with the route's handler: the response review in the request's
 * version with its uid, never a rejection. A review too broken to answer throws the decoder's
 * `WebhookRequestError` (the caller answers 400).
 */
export async function answerAdmission(
  route: AdmissionRoute,
  body: unknown,
  context: AnswerContext,
): Promise<JsonObject> {
  const decoded = decodeAdmissionReview(body);
  if (!decoded.ok) {
    const message = `invalid AdmissionReview: ${decoded.problems.join('; ')}`;
    context.logger.warn(
      { uid: decoded.uid, problems: decoded.problems },
      'Rejected a malformed admission request',
    );
    return admissionReviewResponse(
      decoded.version,
      decoded.uid,
      denied(message, { code: 400, reason: 'BadRequest' }),
    );
  }
  const { request } = decoded;
  const answer =
    route.type === 'validating'
      ? await validate(route, request, context)
      : await mutate(route, request, context);
  context.logger.debug(
    {
      uid: request.uid,
      operation: request.operation,
      kind: request.kind.kind,
      namespace: request.namespace,
      name: request.name,
      dryRun: request.dryRun,
      allowed: answer.result.allowed,
      patchOperations: answer.patch?.length ?? 0,
    },
    'Answered an admission request',
  );
  return admissionReviewResponse(request.reviewVersion, request.uid, answer.result, answer.patch);
}
