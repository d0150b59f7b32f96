import { randomUUID } from 'node:crypto';
import { applyJsonPatch, type JsonPatchOperation } from '@converge/runtime';
import type { AdmissionAttributes, JsonObject } from './types.ts';

/** The `AdmissionReview` v1 request sent for `attributes`. */
export function reviewRequest(attributes: AdmissionAttributes): { uid: string; body: JsonObject } {
  const uid = randomUUID();
  const { kind, resource, subResource } = attributes;
  const request: JsonObject = {
    uid,
    kind,
    resource,
    ...(subResource === '' ? {} : { subResource }),
    requestKind: attributes.requestKind ?? kind,
    requestResource: attributes.requestResource ?? resource,
    ...(subResource === '' ? {} : { requestSubResource: subResource }),
    ...(attributes.name === '' ? {} : { name: attributes.name }),
    ...(attributes.namespace === '' ? {} : { namespace: attributes.namespace }),
    operation: attributes.operation,
    userInfo: attributes.userInfo,
    object: attributes.object,
    oldObject: attributes.oldObject,
    dryRun: attributes.dryRun,
    options: attributes.options,
  };
  return { uid, body: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request } };
}

/** What a webhook answered, checked as kube-apiserver's `VerifyAdmissionResponse`. */
export interface ReviewResult {
  readonly allowed: boolean;
  readonly status: JsonObject | undefined;
  readonly warnings: readonly string[];
  readonly patch: JsonPatchOperation[] | undefined;
}

function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(problem: string): Error {
  return new Error(`received invalid webhook response: ${problem}`);
}

/**
 * Checks a response: an `admission.k8s.io/v1` `AdmissionReview` echoing `uid`; for mutating
 * webhooks `patch` and `patchType: JSONPatch` both or neither; validating ones return no patch.
 * Throws (a call failure, subject to `failurePolicy`) otherwise.
 */
export function readReview(review: unknown, uid: string, mutating: boolean): ReviewResult {
  if (!isRecord(review) || review.apiVersion !== 'admission.k8s.io/v1' || review.kind !== 'AdmissionReview') {
    const got = isRecord(review)
      ? `${String(review.apiVersion)}, Kind=${String(review.kind)}`
      : typeof review;
    throw invalid(`expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${got}`);
  }
  const response = review.response;
  if (!isRecord(response)) throw invalid('webhook response was absent');
  if (response.uid !== uid) {
    throw invalid(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(response.uid ?? '')}`);
  }
  const warnings = Array.isArray(response.warnings)
    ? response.warnings.filter((w): w is string => typeof w === 'string')
    : [];
  const status = isRecord(response.status) ? response.status : undefined;
  const hasPatch = typeof response.patch === 'string' && response.patch !== '';
  const hasType = typeof response.patchType === 'string' && response.patchType !== '';
  if (!mutating && (hasPatch || hasType)) throw invalid('validating webhooks may not return patches');
  if (hasPatch && !hasType) throw invalid('webhook returned response.patch but not response.patchType');
  if (hasType && !hasPatch) throw invalid('webhook returned response.patchType but not response.patch');
  if (hasType && response.patchType !== 'JSONPatch') {
    throw invalid(`webhook returned invalid response.patchType of ${JSON.stringify(response.patchType)}`);
  }
  let patch: JsonPatchOperation[] | undefined;
  if (hasPatch && response.allowed === true) {
    const decoded: unknown = JSON.parse(Buffer.from(response.patch as string, 'base64').toString('utf8'));
    if (!Array.isArray(decoded)) throw invalid('response.patch is not a JSON patch');
    patch = decoded as JsonPatchOperation[];
  }
  return { allowed: response.allowed === true, status, warnings, patch };
}

/** `object` with a webhook's JSON patch applied. */
export function patched(object: JsonObject, patch: readonly JsonPatchOperation[]): JsonObject {
  const result = applyJsonPatch(object, patch);
  if (!isRecord(result)) throw new Error('the patched object is not an object');
  return result;
}
