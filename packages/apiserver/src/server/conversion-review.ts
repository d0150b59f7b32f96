/**
 * The `ConversionReview` exchange of CRD conversion webhooks, without the transport: the request
 * kube-apiserver 1.32 sends (first supported version of `conversionReviewVersions`, a fresh `uid`,
 * `desiredAPIVersion`, the objects not yet in that version) and the checks it makes of the answer
 * (apiextensions-apiserver `webhook_converter.go`): review kind and uid, `result.status`, the
 * number of objects, their group/version and kind, the same name, namespace and uid, and metadata
 * restored from the original except `labels` and `annotations`.
 */
import { randomUUID } from 'node:crypto';
import type { JsonObject } from './api-resource.ts';

/** The ConversionReview versions this server speaks, in the order kube-apiserver prefers none. */
export const CONVERSION_REVIEW_VERSIONS: readonly string[] = ['v1', 'v1beta1'];

/** One request: the body to POST, its uid and which objects (by index) it carries. */
export interface ConversionRequest {
  readonly uid: string;
  readonly reviewVersion: string;
  readonly body: JsonObject;
  /** Indexes into the input of the objects sent (those not already in the desired version). */
  readonly sent: readonly number[];
}

function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function metaOf(object: JsonObject): JsonObject {
  return isRecord(object.metadata) ? object.metadata : {};
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** `group/version, Kind=Kind`, as Go prints a GroupVersionKind. */
export function gvkString(apiVersion: string, kind: string): string {
  return `${apiVersion}, Kind=${kind}`;
}

/**
 * The ConversionReview for the objects of `objects` not in `desiredApiVersion`, or undefined when
 * none needs converting. Throws when `reviewVersions` names no version this server speaks.
 */
export function conversionRequest(
  objects: readonly JsonObject[],
  desiredApiVersion: string,
  reviewVersions: readonly string[],
): ConversionRequest | undefined {
  const sent: number[] = [];
  objects.forEach((o, i) => {
    if (o.apiVersion !== desiredApiVersion) sent.push(i);
  });
  if (sent.length === 0) return undefined;
  const reviewVersion = reviewVersions.find((v) => CONVERSION_REVIEW_VERSIONS.includes(v));
  if (reviewVersion === undefined) throw new Error('no supported conversion review versions');
  const uid = randomUUID();
  const body: JsonObject = {
    apiVersion: `apiextensions.k8s.io/${reviewVersion}`,
    kind: 'ConversionReview',
    request: { uid, desiredAPIVersion: desiredApiVersion, objects: sent.map((i) => objects[i]) },
  };
  return { uid, reviewVersion, body, sent };
}

/**
 * The converted objects of a webhook's answer, checked as `getConvertedObjectsFromResponse`: a v1
 * review must be `apiextensions.k8s.io/v1` ConversionReview echoing the uid (v1beta1 answers are
 * not checked for either, as upstream); `result.status` must be `Success`. Throws the problem.
 */
export function convertedObjectsOf(review: unknown, request: ConversionRequest): unknown[] {
  if (!isRecord(review)) throw new Error('no response provided');
  if (request.reviewVersion === 'v1') {
    if (review.apiVersion !== 'apiextensions.k8s.io/v1' || review.kind !== 'ConversionReview') {
      throw new Error(
        `expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got ${gvkString(str(review.apiVersion), str(review.kind))}`,
      );
    }
  }
  const response = review.response;
  if (!isRecord(response)) throw new Error('no response provided');
  if (request.reviewVersion === 'v1' && response.uid !== request.uid) {
    throw new Error(
      `expected response.uid=${JSON.stringify(request.uid)}, got ${JSON.stringify(str(response.uid))}`,
    );
  }
  const result = isRecord(response.result) ? response.result : {};
  if (result.status !== 'Success') {
    const message = str(result.message);
    if (message !== '') throw new Error(message);
    throw new Error(`response.result.status was '${str(result.status)}', not 'Success'`);
  }
  return Array.isArray(response.convertedObjects) ? response.convertedObjects : [];
}

/** Go's `%T` of a JSON value decoded into `interface{}`. */
function goType(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int64' : 'float64';
  if (Array.isArray(value)) return '[]interface {}';
  return 'map[string]interface {}';
}

/** `validateConvertedObject`: kind, name, namespace and uid must not change. */
function sameIdentity(original: JsonObject, converted: JsonObject): string | undefined {
  const a = metaOf(original);
  const b = metaOf(converted);
  const pairs: [string, unknown, unknown][] = [
    ['kind', original.kind, converted.kind],
    ['name', a.name, b.name],
    ['namespace', a.namespace, b.namespace],
    ['UID', a.uid, b.uid],
  ];
  for (const [what, e, g] of pairs) {
    if (str(e) !== str(g)) return `must have the same ${what}: ${str(e)} != ${str(g)}`;
  }
  return undefined;
}

/**
 * `restoreObjectMeta`: the original metadata, with the converted object's `labels` and
 * `annotations` (string maps) — any other metadata the webhook changed is dropped, as upstream.
 */
function restoreMetadata(original: JsonObject, converted: JsonObject): string | undefined {
  if (!('metadata' in converted)) return 'missing metadata in converted object';
  const answered = converted.metadata;
  if (!isRecord(answered)) return `invalid metadata of type ${goType(answered)} in converted object`;
  const restored = structuredClone(metaOf(original));
  for (const field of ['labels', 'annotations']) {
    const value = answered[field];
    if (value === undefined || value === null) {
      delete restored[field];
      continue;
    }
    if (!isRecord(value)) return `invalid metadata.${field} of type ${goType(value)} in converted object`;
    for (const [key, v] of Object.entries(value)) {
      if (typeof v !== 'string')
        return `metadata.${field}[${key}] must be a string, but is ${goType(v)} in converted object`;
    }
    restored[field] = value;
  }
  converted.metadata = restored;
  return undefined;
}

/**
 * The objects after conversion, in input order: the answered ones checked against the originals
 * and their metadata restored, the others (already in the desired version) as they were. Throws
 * with upstream's message (`conversion webhook for GVK returned …`); `gvk` names the input.
 */
export function mergeConverted(
  objects: readonly JsonObject[],
  request: ConversionRequest,
  converted: readonly unknown[],
  desiredApiVersion: string,
  gvk: string,
  isList: boolean,
): JsonObject[] {
  if (converted.length !== request.sent.length) {
    throw new Error(
      `conversion webhook for ${gvk} returned ${converted.length} objects, expected ${request.sent.length}`,
    );
  }
  const out = [...objects];
  request.sent.forEach((index, n) => {
    const original = objects[index] as JsonObject;
    const answer = converted[n];
    const at = isList ? `invalid converted object at index ${n}` : 'invalid object at index 0';
    if (!isRecord(answer)) {
      throw new Error(
        `conversion webhook for ${gvk} returned ${at}: Object 'Kind' is missing in '${String(answer)}'`,
      );
    }
    const object = structuredClone(answer);
    if (object.apiVersion !== desiredApiVersion) {
      throw new Error(
        `conversion webhook for ${gvk} returned ${at}: invalid groupVersion (expected ${desiredApiVersion}, received ${str(object.apiVersion)})`,
      );
    }
    if (object.kind !== original.kind) {
      throw new Error(
        `conversion webhook for ${gvk} returned ${at}: invalid kind (expected ${str(original.kind)}, received ${str(object.kind)})`,
      );
    }
    const identity = sameIdentity(original, object);
    if (identity !== undefined) {
      const where = isList ? `invalid converted object at index ${n}` : 'invalid object';
      throw new Error(`conversion webhook for ${gvk} returned ${where}: ${identity}`);
    }
    const meta = restoreMetadata(original, object);
    if (meta !== undefined) {
      const where = isList ? `invalid metadata in object at index ${n}` : 'invalid metadata';
      throw new Error(`conversion webhook for ${gvk} returned ${where}: ${meta}`);
    }
    out[index] = object;
  });
  return out;
}
