/**
 * `k8s.io.apimachinery.pkg.apis.meta.v1` messages, by their field numbers in apimachinery's
 * `pkg/apis/meta/v1/generated.proto`: ObjectMeta, OwnerReference, ManagedFieldsEntry.
 */
import { ProtobufDecodeError, ProtobufErrorCodes } from './errors.ts';
import { type JsonObject, readMapEntry, readTime } from './fields.ts';
import type { ProtoReader, Tag } from './wire.ts';

/**
 * Decodes an ObjectMeta into its JSON form, omitting what Go's JSON encoder omits: empty strings,
 * a zero generation, empty maps and lists, zero timestamps. Pointer fields
 * (`deletionGracePeriodSeconds`) are kept whenever present.
 */
export function readObjectMeta(reader: ProtoReader, tag: Tag): JsonObject {
  const m = reader.message(tag, 'metadata');
  const meta: JsonObject = {};
  const labels: JsonObject = {};
  const annotations: JsonObject = {};
  const ownerReferences: JsonObject[] = [];
  const finalizers: string[] = [];
  const managedFields: JsonObject[] = [];
  while (!m.done) {
    const t = m.tag('ObjectMeta');
    switch (t.field) {
      case 1:
        setString(meta, 'name', m.string(t, 'Name'));
        break;
      case 2:
        setString(meta, 'generateName', m.string(t, 'GenerateName'));
        break;
      case 3:
        setString(meta, 'namespace', m.string(t, 'Namespace'));
        break;
      case 4:
        setString(meta, 'selfLink', m.string(t, 'SelfLink'));
        break;
      case 5:
        setString(meta, 'uid', m.string(t, 'UID'));
        break;
      case 6:
        setString(meta, 'resourceVersion', m.string(t, 'ResourceVersion'));
        break;
      case 7: {
        const generation = Number(m.int64(t, 'Generation'));
        if (generation === 0) delete meta.generation;
        else meta.generation = generation;
        break;
      }
      case 8:
        setTime(meta, 'creationTimestamp', readTime(m, t, 'CreationTimestamp'));
        break;
      case 9:
        setTime(meta, 'deletionTimestamp', readTime(m, t, 'DeletionTimestamp'));
        break;
      case 10:
        meta.deletionGracePeriodSeconds = Number(m.int64(t, 'DeletionGracePeriodSeconds'));
        break;
      case 11:
        readMapEntry(m, t, 'Labels', 'string', labels);
        break;
      case 12:
        readMapEntry(m, t, 'Annotations', 'string', annotations);
        break;
      case 13:
        ownerReferences.push(readOwnerReference(m, t));
        break;
      case 14:
        finalizers.push(m.string(t, 'Finalizers'));
        break;
      case 17:
        managedFields.push(readManagedFieldsEntry(m, t));
        break;
      default:
        m.skip(t);
    }
  }
  if (Object.keys(labels).length > 0) meta.labels = labels;
  if (Object.keys(annotations).length > 0) meta.annotations = annotations;
  if (ownerReferences.length > 0) meta.ownerReferences = ownerReferences;
  if (finalizers.length > 0) meta.finalizers = finalizers;
  if (managedFields.length > 0) meta.managedFields = managedFields;
  return meta;
}

/** OwnerReference: apiVersion, kind, name and uid are always written; the pointers when present. */
function readOwnerReference(reader: ProtoReader, tag: Tag): JsonObject {
  const r = reader.message(tag, 'OwnerReferences');
  const ref: JsonObject = { apiVersion: '', kind: '', name: '', uid: '' };
  while (!r.done) {
    const t = r.tag('OwnerReference');
    switch (t.field) {
      case 1:
        ref.kind = r.string(t, 'Kind');
        break;
      case 3:
        ref.name = r.string(t, 'Name');
        break;
      case 4:
        ref.uid = r.string(t, 'UID');
        break;
      case 5:
        ref.apiVersion = r.string(t, 'APIVersion');
        break;
      case 6:
        ref.controller = r.bool(t, 'Controller');
        break;
      case 7:
        ref.blockOwnerDeletion = r.bool(t, 'BlockOwnerDeletion');
        break;
      default:
        r.skip(t);
    }
  }
  return ref;
}

/** ManagedFieldsEntry; `fieldsV1` holds raw JSON, written into the object as parsed JSON. */
function readManagedFieldsEntry(reader: ProtoReader, tag: Tag): JsonObject {
  const e = reader.message(tag, 'ManagedFields');
  const entry: JsonObject = {};
  while (!e.done) {
    const t = e.tag('ManagedFieldsEntry');
    switch (t.field) {
      case 1:
        setString(entry, 'manager', e.string(t, 'Manager'));
        break;
      case 2:
        setString(entry, 'operation', e.string(t, 'Operation'));
        break;
      case 3:
        setString(entry, 'apiVersion', e.string(t, 'APIVersion'));
        break;
      case 4:
        setTime(entry, 'time', readTime(e, t, 'Time'));
        break;
      case 6:
        setString(entry, 'fieldsType', e.string(t, 'FieldsType'));
        break;
      case 7:
        entry.fieldsV1 = readFieldsV1(e, t);
        break;
      case 8:
        setString(entry, 'subresource', e.string(t, 'Subresource'));
        break;
      default:
        e.skip(t);
    }
  }
  return entry;
}

/** FieldsV1 { bytes Raw = 1 }: the raw bytes are a JSON document (`{}` when empty). */
function readFieldsV1(reader: ProtoReader, tag: Tag): unknown {
  const f = reader.message(tag, 'FieldsV1');
  let raw = '';
  let at = f.offset;
  while (!f.done) {
    const t = f.tag('FieldsV1');
    if (t.field === 1) {
      at = f.offset;
      raw = f.string(t, 'Raw');
    } else f.skip(t);
  }
  if (raw === '') return {};
  try {
    return JSON.parse(raw) as unknown;
  } catch (cause) {
    throw new ProtobufDecodeError(ProtobufErrorCodes.MALFORMED, 'managedFields: fieldsV1 is not JSON', at, {
      cause,
    });
  }
}

/** Sets a string field, or removes it when empty (Go's `omitempty`; a later empty value wins). */
export function setString(target: JsonObject, key: string, value: string): void {
  if (value === '') delete target[key];
  else target[key] = value;
}

function setTime(target: JsonObject, key: string, value: string | undefined): void {
  if (value === undefined) delete target[key];
  else target[key] = value;
}
