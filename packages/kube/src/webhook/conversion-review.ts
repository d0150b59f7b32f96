import type { Converter, UnstructuredObject } from '@converge/runtime';
import type { AnswerContext } from './admission-handler.ts';
import { WebhookConversionError, WebhookTimeoutError } from './errors.ts';
import { decodeEnvelope, isJsonObject, type JsonObject } from './review-decode.ts';
import { messageOf, settle } from './settle.ts';

export const CONVERSION_REVIEW_VERSIONS = [
  'apiextensions.k8s.io/v1',
  'apiextensions.k8s.io/v1beta1',
] as const;

/** A registered conversion webhook. */
export interface ConversionRoute {
  readonly type: 'conversion';
  readonly path: string;
  readonly converter: Converter;
}

function review(version: string, response: JsonObject): JsonObject {
  return { apiVersion: version, kind: 'ConversionReview', response };
}

/** One object checked: a JSON object with a string `apiVersion` and `kind`. */
function checkObject(value: unknown, index: number): UnstructuredObject {
  if (!isJsonObject(value)) throw new WebhookConversionError(`request.objects[${index}] is not an object`);
  if (typeof value.apiVersion !== 'string' || typeof value.kind !== 'string') {
    throw new WebhookConversionError(`request.objects[${index}] has no string apiVersion and kind`);
  }
  return value as unknown as UnstructuredObject;
}

/** The converter's result as JSON, stamped with the desired apiVersion and the source's kind and metadata. */
function stamp(result: unknown, source: UnstructuredObject, desired: string): JsonObject {
  let json: unknown;
  try {
    json = JSON.parse(JSON.stringify(result));
  } catch (cause) {
    throw new WebhookConversionError(
      `the converter returned something that is not JSON: ${messageOf(cause)}`,
      {
        cause,
      },
    );
  }
  if (!isJsonObject(json))
    throw new WebhookConversionError('the converter returned something that is not an object');
  const metadata = isJsonObject(json.metadata) ? json.metadata : source.metadata;
  return { ...json, apiVersion: desired, kind: source.kind, ...(metadata === undefined ? {} : { metadata }) };
}

async function convertAll(
  route: ConversionRoute,
  objects: readonly unknown[],
  desired: string,
  signal: AbortSignal,
): Promise<JsonObject[]> {
  const converted: JsonObject[] = [];
  for (const [index, value] of objects.entries()) {
    const source = checkObject(value, index);
    if (source.apiVersion === desired) {
      converted.push(source as unknown as JsonObject);
      continue;
    }
    const result = await route.converter.convert(structuredClone(source), desired, signal);
    converted.push(stamp(result, source, desired));
  }
  return converted;
}

/**
 * Answers one `ConversionReview` (apiextensions.k8s.io v1 or v1beta1): every object of
 * `request.objects` converted to `request.desiredAPIVersion` in order (objects already of that
 * version pass unchanged), `result.status` `Success`; or, when any object cannot be converted or the
 * converter times out, `Failure` with a message and no objects. The uid is echoed. A review too
 * broken to answer throws `WebhookRequestError` (the caller answers 400).
 */
export async function answerConversion(
  route: ConversionRoute,
  body: unknown,
  context: AnswerContext,
): Promise<JsonObject> {
  const { version, request, uid } = decodeEnvelope(body, 'ConversionReview', CONVERSION_REVIEW_VERSIONS);
  const desired = request.desiredAPIVersion;
  const objects = request.objects;
  const failure = (message: string): JsonObject =>
    review(version, { uid, result: { metadata: {}, status: 'Failure', message } });
  if (typeof desired !== 'string' || desired === '') {
    return failure('invalid ConversionReview: request.desiredAPIVersion must be a non-empty string');
  }
  if (!Array.isArray(objects)) return failure('invalid ConversionReview: request.objects must be a list');
  const outcome = await settle((signal) => convertAll(route, objects, desired, signal), {
    ...context,
    reason: () => new WebhookTimeoutError(route.path, context.timeoutMs),
  });
  if (outcome.kind === 'done') {
    context.logger.debug({ uid, desiredAPIVersion: desired, objects: objects.length }, 'Converted objects');
    return review(version, {
      uid,
      convertedObjects: outcome.value,
      result: { metadata: {}, status: 'Success' },
    });
  }
  const error =
    outcome.kind === 'timeout'
      ? new WebhookTimeoutError(route.path, context.timeoutMs)
      : outcome.error instanceof WebhookConversionError
        ? outcome.error
        : new WebhookConversionError(`conversion failed: ${messageOf(outcome.error)}`, {
            cause: outcome.error,
          });
  context.logger.warn({ err: error, code: error.code, uid, desiredAPIVersion: desired }, 'Conversion failed');
  return failure(error.message);
}
