/**
 * `k8s.io.api.core.v1` messages the server decodes, by their field numbers in k8s.io/api
 * `core/v1/generated.proto`: the bodies `kubectl create namespace|configmap|secret|serviceaccount`
 * send.
 */
import { type JsonObject, readMapEntry, readTime } from './fields.ts';
import { readObjectMeta, setString } from './object-meta.ts';
import type { ProtoReader, Tag } from './wire.ts';

/** Decodes a message's fields (after the envelope) into the object's JSON body (no kind/apiVersion). */
export type MessageDecoder = (reader: ProtoReader) => JsonObject;

/** Namespace { metadata = 1; spec = 2 { finalizers = 1 }; status = 3 { phase = 1; conditions = 2 } }. */
export function decodeNamespace(r: ProtoReader): JsonObject {
  let metadata: JsonObject = {};
  const spec: JsonObject = {};
  const status: JsonObject = {};
  while (!r.done) {
    const t = r.tag('Namespace');
    if (t.field === 1) metadata = readObjectMeta(r, t);
    else if (t.field === 2) Object.assign(spec, readNamespaceSpec(r, t));
    else if (t.field === 3) Object.assign(status, readNamespaceStatus(r, t));
    else r.skip(t);
  }
  return { metadata, spec, status };
}

function readNamespaceSpec(reader: ProtoReader, tag: Tag): JsonObject {
  const s = reader.message(tag, 'Spec');
  const finalizers: string[] = [];
  while (!s.done) {
    const t = s.tag('NamespaceSpec');
    if (t.field === 1) finalizers.push(s.string(t, 'Finalizers'));
    else s.skip(t);
  }
  return finalizers.length > 0 ? { finalizers } : {};
}

function readNamespaceStatus(reader: ProtoReader, tag: Tag): JsonObject {
  const s = reader.message(tag, 'Status');
  const status: JsonObject = {};
  const conditions: JsonObject[] = [];
  while (!s.done) {
    const t = s.tag('NamespaceStatus');
    if (t.field === 1) setString(status, 'phase', s.string(t, 'Phase'));
    else if (t.field === 2) conditions.push(readNamespaceCondition(s, t));
    else s.skip(t);
  }
  if (conditions.length > 0) status.conditions = conditions;
  return status;
}

/** NamespaceCondition { type = 1; status = 2; lastTransitionTime = 4; reason = 5; message = 6 }. */
function readNamespaceCondition(reader: ProtoReader, tag: Tag): JsonObject {
  const c = reader.message(tag, 'Conditions');
  const condition: JsonObject = { type: '', status: '' };
  while (!c.done) {
    const t = c.tag('NamespaceCondition');
    if (t.field === 1) condition.type = c.string(t, 'Type');
    else if (t.field === 2) condition.status = c.string(t, 'Status');
    else if (t.field === 4) {
      const time = readTime(c, t, 'LastTransitionTime');
      if (time === undefined) delete condition.lastTransitionTime;
      else condition.lastTransitionTime = time;
    } else if (t.field === 5) setString(condition, 'reason', c.string(t, 'Reason'));
    else if (t.field === 6) setString(condition, 'message', c.string(t, 'Message'));
    else c.skip(t);
  }
  return condition;
}

/** ConfigMap { metadata = 1; data = 2 (map string); binaryData = 3 (map bytes); immutable = 4 }. */
export function decodeConfigMap(r: ProtoReader): JsonObject {
  let metadata: JsonObject = {};
  const data: JsonObject = {};
  const binaryData: JsonObject = {};
  let immutable: boolean | undefined;
  while (!r.done) {
    const t = r.tag('ConfigMap');
    if (t.field === 1) metadata = readObjectMeta(r, t);
    else if (t.field === 2) readMapEntry(r, t, 'Data', 'string', data);
    else if (t.field === 3) readMapEntry(r, t, 'BinaryData', 'bytes', binaryData);
    else if (t.field === 4) immutable = r.bool(t, 'Immutable');
    else r.skip(t);
  }
  const out: JsonObject = { metadata };
  if (immutable !== undefined) out.immutable = immutable;
  if (Object.keys(data).length > 0) out.data = data;
  if (Object.keys(binaryData).length > 0) out.binaryData = binaryData;
  return out;
}

/**
 * Secret { metadata = 1; data = 2 (map bytes, written as base64); type = 3; stringData = 4 (map
 * string); immutable = 5 }. `stringData` is passed on as sent: merging it into `data` is the
 * create pipeline's job, for JSON and protobuf bodies alike.
 */
export function decodeSecret(r: ProtoReader): JsonObject {
  let metadata: JsonObject = {};
  const data: JsonObject = {};
  const stringData: JsonObject = {};
  let type = '';
  let immutable: boolean | undefined;
  while (!r.done) {
    const t = r.tag('Secret');
    if (t.field === 1) metadata = readObjectMeta(r, t);
    else if (t.field === 2) readMapEntry(r, t, 'Data', 'bytes', data);
    else if (t.field === 3) type = r.string(t, 'Type');
    else if (t.field === 4) readMapEntry(r, t, 'StringData', 'string', stringData);
    else if (t.field === 5) immutable = r.bool(t, 'Immutable');
    else r.skip(t);
  }
  const out: JsonObject = { metadata };
  if (immutable !== undefined) out.immutable = immutable;
  if (Object.keys(data).length > 0) out.data = data;
  if (Object.keys(stringData).length > 0) out.stringData = stringData;
  if (type !== '') out.type = type;
  return out;
}

/**
 * ServiceAccount { metadata = 1; secrets = 2 (ObjectReference); imagePullSecrets = 3
 * (LocalObjectReference); automountServiceAccountToken = 4 }.
 */
export function decodeServiceAccount(r: ProtoReader): JsonObject {
  let metadata: JsonObject = {};
  const secrets: JsonObject[] = [];
  const imagePullSecrets: JsonObject[] = [];
  let automount: boolean | undefined;
  while (!r.done) {
    const t = r.tag('ServiceAccount');
    if (t.field === 1) metadata = readObjectMeta(r, t);
    else if (t.field === 2) secrets.push(readObjectReference(r, t));
    else if (t.field === 3) imagePullSecrets.push(readLocalObjectReference(r, t));
    else if (t.field === 4) automount = r.bool(t, 'AutomountServiceAccountToken');
    else r.skip(t);
  }
  const out: JsonObject = { metadata };
  if (secrets.length > 0) out.secrets = secrets;
  if (imagePullSecrets.length > 0) out.imagePullSecrets = imagePullSecrets;
  if (automount !== undefined) out.automountServiceAccountToken = automount;
  return out;
}

const OBJECT_REFERENCE_FIELDS = [
  'kind',
  'namespace',
  'name',
  'uid',
  'apiVersion',
  'resourceVersion',
  'fieldPath',
];

/** ObjectReference { kind = 1; namespace = 2; name = 3; uid = 4; apiVersion = 5; resourceVersion = 6; fieldPath = 7 }. */
function readObjectReference(reader: ProtoReader, tag: Tag): JsonObject {
  const o = reader.message(tag, 'Secrets');
  const ref: JsonObject = {};
  while (!o.done) {
    const t = o.tag('ObjectReference');
    const key = OBJECT_REFERENCE_FIELDS[t.field - 1];
    if (key === undefined) o.skip(t);
    else setString(ref, key, o.string(t, key));
  }
  return ref;
}

/** LocalObjectReference { name = 1 }. */
function readLocalObjectReference(reader: ProtoReader, tag: Tag): JsonObject {
  const o = reader.message(tag, 'ImagePullSecrets');
  const ref: JsonObject = {};
  while (!o.done) {
    const t = o.tag('LocalObjectReference');
    if (t.field === 1) setString(ref, 'name', o.string(t, 'Name'));
    else o.skip(t);
  }
  return ref;
}

/** The decoders by `apiVersion/kind`. */
export const CORE_V1_DECODERS: ReadonlyMap<string, MessageDecoder> = new Map([
  ['v1/Namespace', decodeNamespace],
  ['v1/ConfigMap', decodeConfigMap],
  ['v1/Secret', decodeSecret],
  ['v1/ServiceAccount', decodeServiceAccount],
]);
