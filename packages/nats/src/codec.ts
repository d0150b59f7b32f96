import {
  apiVersionOf,
  fieldError,
  type KubeObject,
  type ObjectKey,
  type ResourceType,
} from '@converge/runtime';
import { checkShape, type JsonObject } from '@converge/store';
import { invalid, MalformedValueError } from './errors.ts';
import { isFenceKey } from './fence.ts';
import { convergeCodec, type KvCodec, type KvCodecContext } from './kv-codec.ts';

/** The KV client's operation header: `DEL` or `PURGE` on delete markers, absent on puts. */
export const KV_OPERATION = 'KV-Operation';
/** Set to `CREATE` on every put this backend makes for a create: the watch reports it as ADDED. */
export const CONVERGE_OPERATION = 'Converge-Operation';
/** The publish precondition, which JetStream keeps with the message: the key's previous revision. */
export const EXPECTED_LAST_SUBJECT_SEQUENCE = 'Nats-Expected-Last-Subject-Sequence';

/**
 * The key of the entry this backend writes into a bucket whose stream has never held a message, so
 * that no list of one of its buckets reports resourceVersion '0' (which means "any" to a watch).
 * It has no `.`, so it is never the key of an object; lists, watches and the collector skip it.
 */
export const BUCKET_MARKER_KEY = 'converge-bucket';

/** One message of a bucket's stream, read from a consumer or a direct get. */
export interface RawEntry {
  /** The KV key (the subject without `$KV.<bucket>.`). */
  readonly key: string;
  /** The stream sequence: the KV revision. */
  readonly seq: number;
  readonly operation: 'PUT' | 'DEL' | 'PURGE';
  readonly data: Uint8Array;
  /** A put this backend made for a create. */
  readonly create: boolean;
  /** The key's previous revision the writer asserted (0: the key was new), when it asserted one. */
  readonly previous: number | undefined;
}

/** A decoded entry: a live object, a delete marker, or something another writer left that is not an object. */
export type DecodedEntry =
  | { readonly kind: 'internal'; readonly entry: RawEntry }
  | { readonly kind: 'object'; readonly entry: RawEntry; readonly object: KubeObject }
  | {
      readonly kind: 'deleted';
      readonly entry: RawEntry;
      /** The last state the marker carries, or metadata rebuilt from the key (`known: false`). */
      readonly object: KubeObject;
      readonly known: boolean;
    }
  | {
      readonly kind: 'malformed';
      readonly entry: RawEntry;
      readonly error: MalformedValueError;
      /** The key's namespace and name, when the key itself decodes. */
      readonly objectKey: ObjectKey | undefined;
    };

/** Reads the headers of a JetStream message into the fields of a {@link RawEntry}. */
export function entryHeaders(
  get: (name: string) => string,
): Pick<RawEntry, 'operation' | 'create' | 'previous'> {
  const op = get(KV_OPERATION);
  const expected = get(EXPECTED_LAST_SUBJECT_SEQUENCE);
  const previous = expected === '' ? Number.NaN : Number(expected);
  return {
    operation: op === 'DEL' || op === 'PURGE' ? op : 'PUT',
    create: get(CONVERGE_OPERATION) === 'CREATE',
    previous: Number.isSafeInteger(previous) && previous >= 0 ? previous : undefined,
  };
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Metadata of an object known only by its key: what a watch reports for a bare delete marker. */
export function objectFromKey(type: ResourceType, objectKey: ObjectKey, seq: number): KubeObject {
  return {
    apiVersion: apiVersionOf(type),
    kind: type.kind,
    metadata: {
      name: objectKey.name,
      ...(type.namespaced ? { namespace: objectKey.namespace } : {}),
      resourceVersion: String(seq),
    },
  };
}

/** A message for whatever a codec threw. */
function thrown(error: unknown): string {
  try {
    const message: unknown = error instanceof Error ? error.message : String(error);
    return typeof message === 'string' ? message : String(message);
  } catch {
    return 'it threw a value that cannot be printed';
  }
}

/**
 * Parses a stored value into an object of `type` with `resourceVersion` = the entry's revision.
 * Returns the reason it is not one (`undefined` object) instead of throwing, whatever the codec does.
 */
function parseObject(
  codec: KvCodec,
  context: KvCodecContext,
  objectKey: { namespace: string; name: string },
  entry: RawEntry,
): { object: KubeObject } | { reason: string } {
  const type = context.type;
  let parsed: unknown;
  try {
    parsed = codec.decodeValue(entry.data, { ...context, key: objectKey, revision: entry.seq });
    // A codec may hand out objects it keeps: the checks below change the copy they return.
    if (codec !== convergeCodec) parsed = structuredClone(parsed);
  } catch (error) {
    return { reason: codec === convergeCodec ? thrown(error) : `codec ${codec.name}: ${thrown(error)}` };
  }
  if (!isObject(parsed)) return { reason: 'not a JSON object' };
  const apiVersion = apiVersionOf(type);
  if (parsed.apiVersion !== undefined && parsed.apiVersion !== apiVersion) {
    return {
      reason: `apiVersion is ${JSON.stringify(parsed.apiVersion)}, not ${JSON.stringify(apiVersion)}`,
    };
  }
  if (parsed.kind !== undefined && parsed.kind !== type.kind) {
    return { reason: `kind is ${JSON.stringify(parsed.kind)}, not ${JSON.stringify(type.kind)}` };
  }
  if (!isObject(parsed.metadata)) return { reason: 'metadata is not an object' };
  try {
    checkShape(parsed);
  } catch (error) {
    return { reason: (error as Error).message };
  }
  const meta = parsed.metadata as JsonObject;
  if ((meta.name ?? objectKey.name) !== objectKey.name) {
    return { reason: `metadata.name ${JSON.stringify(meta.name)} differs from the key` };
  }
  if ((meta.namespace ?? objectKey.namespace) !== objectKey.namespace) {
    return { reason: `metadata.namespace ${JSON.stringify(meta.namespace)} differs from the key` };
  }
  meta.name = objectKey.name;
  if (type.namespaced) meta.namespace = objectKey.namespace;
  meta.resourceVersion = String(entry.seq);
  const { apiVersion: _a, kind: _k, ...rest } = parsed;
  return { object: { apiVersion, kind: type.kind, ...rest } as unknown as KubeObject };
}

/** The object key `codec` decodes `key` to, or undefined when it does not (or throws, or returns junk). */
export function decodeObjectKey(
  codec: KvCodec,
  context: KvCodecContext,
  key: string,
): { namespace: string; name: string } | undefined {
  let namespace: unknown;
  let name: unknown;
  try {
    const decoded = codec.decodeKey(key, context);
    if (!isObject(decoded)) return undefined;
    ({ namespace = '', name } = decoded as { namespace?: unknown; name?: unknown });
  } catch {
    return undefined;
  }
  if (typeof namespace !== 'string' || typeof name !== 'string' || name === '') return undefined;
  return { namespace, name };
}

/** Decodes one stored entry of `bucket` (serving `type`) with `codec`. Never throws. */
export function decodeEntry(
  bucket: string,
  type: ResourceType,
  entry: RawEntry,
  codec: KvCodec = convergeCodec,
): DecodedEntry {
  if (entry.key === BUCKET_MARKER_KEY || isFenceKey(entry.key)) return { kind: 'internal', entry };
  const context: KvCodecContext = { type, bucket };
  const objectKey = decodeObjectKey(codec, context, entry.key);
  const malformed = (reason: string, key: ObjectKey | undefined): DecodedEntry => ({
    kind: 'malformed',
    entry,
    error: new MalformedValueError(bucket, entry.key, entry.seq, reason),
    objectKey: key,
  });
  if (objectKey === undefined)
    return malformed(
      codec === convergeCodec
        ? 'the key is not <namespace>.<name> as this backend writes it'
        : `the key is not one codec ${codec.name} decodes`,
      undefined,
    );
  if (type.namespaced === (objectKey.namespace === '')) {
    return malformed(
      type.namespaced ? 'a namespaced kind without a namespace' : 'a cluster-scoped kind with a namespace',
      undefined,
    );
  }
  if (entry.operation !== 'PUT') {
    const parsed = entry.data.length === 0 ? undefined : parseObject(codec, context, objectKey, entry);
    if (parsed !== undefined && 'object' in parsed) {
      return { kind: 'deleted', entry, object: parsed.object, known: true };
    }
    return { kind: 'deleted', entry, object: objectFromKey(type, objectKey, entry.seq), known: false };
  }
  const parsed = parseObject(codec, context, objectKey, entry);
  return 'object' in parsed
    ? { kind: 'object', entry, object: parsed.object }
    : malformed(parsed.reason, objectKey);
}

/**
 * The stored form of an object: what `codec` makes of it without `metadata.resourceVersion` (the
 * revision is the KV's). A codec that throws or returns no bytes is an InvalidError of the object.
 */
export function encodeObject(
  object: object,
  context: KvCodecContext,
  codec: KvCodec = convergeCodec,
): Uint8Array {
  const { resourceVersion: _rv, ...meta } = (object as { metadata: JsonObject }).metadata;
  const stored = { ...object, metadata: meta } as KubeObject;
  let bytes: unknown;
  try {
    bytes = codec.encodeValue(stored, context);
  } catch (error) {
    throw codecRefused(context.type, meta.name, `codec ${codec.name} cannot store it: ${thrown(error)}`);
  }
  if (!(bytes instanceof Uint8Array)) {
    throw codecRefused(context.type, meta.name, `codec ${codec.name} returned no bytes for it`);
  }
  return bytes;
}

/** The InvalidError of an object the bucket's codec cannot store. */
export function codecRefused(type: ResourceType, name: unknown, message: string): Error {
  const text = typeof name === 'string' ? name : '';
  return invalid(type, text, [fieldError.invalid('metadata.name', text, message)]);
}
