import type {
  AdmissionOperation,
  AdmissionRequest,
  AdmissionResult,
  AdmissionReviewVersion,
  GroupVersionKind,
  GroupVersionResource,
  JsonPatchOperation,
} from '@converge/runtime';
import { decodeEnvelope, FieldReader, type JsonObject } from './review-decode.ts';

export const ADMISSION_REVIEW_VERSIONS: readonly AdmissionReviewVersion[] = [
  'admission.k8s.io/v1',
  'admission.k8s.io/v1beta1',
];

const OPERATIONS: readonly AdmissionOperation[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

/** An admission request without its per-call signal. */
export type DecodedAdmissionRequest = Omit<AdmissionRequest, 'signal'>;

/**
 * A decoded review: either a request to hand to a handler, or a review well-formed enough to answer
 * (it has a uid) whose fields are wrong — answered with a 400 denial naming them.
 */
export type DecodedAdmissionReview =
  | { readonly ok: true; readonly request: DecodedAdmissionRequest }
  | {
      readonly ok: false;
      readonly version: AdmissionReviewVersion;
      readonly uid: string;
      readonly problems: readonly string[];
    };

function gvk(reader: FieldReader, name: string, fallback?: GroupVersionKind): GroupVersionKind {
  if (fallback !== undefined && reader.object(name) === null) return fallback;
  const fields = reader.nested(name);
  return {
    group: fields.string('group', ''),
    version: fields.string('version'),
    kind: fields.string('kind'),
  };
}

function gvr(reader: FieldReader, name: string, fallback?: GroupVersionResource): GroupVersionResource {
  if (fallback !== undefined && reader.object(name) === null) return fallback;
  const fields = reader.nested(name);
  return {
    group: fields.string('group', ''),
    version: fields.string('version'),
    resource: fields.string('resource'),
  };
}

/**
 * Decodes an `AdmissionReview` (v1 or v1beta1, same shape). A broken envelope (no uid, wrong
 * apiVersion or kind) throws a `WebhookRequestError` (400). Wrong fields inside a request with a
 * uid give `ok: false` and the problems: CREATE and UPDATE need `object`, UPDATE `oldObject`;
 * `object: null` on DELETE is what the API server sends and is fine.
 */
export function decodeAdmissionReview(body: unknown): DecodedAdmissionReview {
  const { version, request, uid } = decodeEnvelope(body, 'AdmissionReview', ADMISSION_REVIEW_VERSIONS);
  const reader = new FieldReader(request, 'request.');
  const operation = reader.oneOf('operation', OPERATIONS);
  const kind = gvk(reader, 'kind');
  const resource = gvr(reader, 'resource');
  const subResource = reader.string('subResource', '');
  const userInfo = reader.nested('userInfo');
  const object = reader.object('object');
  const oldObject = reader.object('oldObject');
  const decoded: DecodedAdmissionRequest = {
    uid,
    reviewVersion: version,
    operation,
    kind,
    resource,
    subResource,
    requestKind: gvk(reader, 'requestKind', kind),
    requestResource: gvr(reader, 'requestResource', resource),
    requestSubResource: reader.string('requestSubResource', subResource),
    name: reader.string('name', ''),
    namespace: reader.string('namespace', ''),
    userInfo: {
      username: userInfo.string('username', ''),
      uid: userInfo.string('uid', ''),
      groups: userInfo.stringList('groups'),
      extra: userInfo.stringListMap('extra'),
    },
    object: object as DecodedAdmissionRequest['object'],
    oldObject: oldObject as DecodedAdmissionRequest['oldObject'],
    dryRun: reader.boolean('dryRun', false),
    options: reader.object('options'),
  };
  const problems = reader.problems;
  if ((operation === 'CREATE' || operation === 'UPDATE') && object === null) {
    problems.push(`request.object is required for ${operation}`);
  }
  if (operation === 'UPDATE' && oldObject === null) problems.push('request.oldObject is required for UPDATE');
  if (problems.length > 0) return { ok: false, version, uid, problems };
  return { ok: true, request: decoded };
}

/** The `AdmissionReview` answering `uid`, in `version`, with a base64 JSON patch when there is one. */
export function admissionReviewResponse(
  version: AdmissionReviewVersion,
  uid: string,
  result: AdmissionResult,
  patch: readonly JsonPatchOperation[] = [],
): JsonObject {
  const response: JsonObject = { uid, allowed: result.allowed };
  if (result.status !== undefined) {
    response.status = { metadata: {}, status: 'Failure', ...result.status };
  }
  if (result.warnings.length > 0) response.warnings = result.warnings;
  if (patch.length > 0) {
    response.patch = Buffer.from(JSON.stringify(patch)).toString('base64');
    response.patchType = 'JSONPatch';
  }
  return { apiVersion: version, kind: 'AdmissionReview', response };
}
