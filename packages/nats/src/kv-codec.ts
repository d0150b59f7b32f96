import type { KubeObject, ObjectKey, ResourceType } from '@converge/runtime';
import { decodeKey, encodeKey, encodeToken } from './keys.ts';

/** What a {@link KvCodec} is told about the bucket it reads or writes. */
export interface KvCodecContext {
  /** The type the bucket serves. */
  readonly type: ResourceType;
  /** The bucket's name. */
  readonly bucket: string;
}

/** What {@link KvCodec.decodeValue} is told about the entry it decodes. */
export interface KvValueContext extends KvCodecContext {
  /** The object key the entry's KV key decoded to. */
  readonly key: { readonly namespace: string; readonly name: string };
  /** The entry's KV revision (it becomes `metadata.resourceVersion`). */
  readonly revision: number;
}

/**
 * How a {@link NatsBackend} maps objects to KV entries and back: the key of a namespace and name,
 * and the bytes of an object. The default, {@link convergeCodec}, is the layout this backend has
 * always written (`<namespace>.<name>` keys, escaped; the object's JSON as value). Give another one
 * with `codecFor` to read (and write) buckets another program laid out, such as the buckets of
 * Kumori's Go controllers.
 *
 * The backend never trusts a codec: a call that throws, a key that is not a valid KV key or does not
 * decode back to the pair it came from, and a decoded value that is not an object of the bucket's
 * type (checked exactly as for the default codec: apiVersion and kind if present, `metadata` an
 * object, metadata fields well-formed, name and namespace equal to the key's) make the entry
 * malformed: lists and watches skip it, log it and count it (`stats().malformedValues`), and a get
 * of it is an `InternalError` caused by a `MalformedValueError`. A write whose key the codec cannot
 * make is an `InvalidError`.
 *
 * @example
 * // Keys are bare names (everything in namespace 'default'); values carry no metadata.
 * const bareNames: KvCodec = {
 *   name: 'bare-names',
 *   encodeKey: ({ name }) => name,
 *   decodeKey: (key) => ({ namespace: 'default', name: key }),
 *   encodeValue: (object) => new TextEncoder().encode(JSON.stringify((object as { spec?: unknown }).spec ?? {})),
 *   decodeValue: (data, { key }) => ({
 *     metadata: { name: key.name, namespace: key.namespace },
 *     spec: JSON.parse(new TextDecoder().decode(data)),
 *   }),
 * };
 */
export interface KvCodec {
  /** Named in logs and in the reasons of malformed entries. */
  readonly name: string;
  /**
   * The KV key of an object (namespace '' for a cluster-scoped one). It must be a valid KV key
   * (`[-/_=.a-zA-Z0-9]+`, no leading or trailing `.`), and `decodeKey` must give the same pair back;
   * throw, or break either rule, for a pair the layout cannot hold.
   */
  encodeKey(key: { readonly namespace: string; readonly name: string }, context: KvCodecContext): string;
  /** The namespace and name a KV key stands for, or undefined for a key that is not an object's. */
  decodeKey(key: string, context: KvCodecContext): ObjectKey | undefined;
  /**
   * The subject filter of one namespace's keys, relative to the bucket (`<token>.*`), so a list of
   * one namespace reads only its keys. Leave it out (or return undefined) to read every key and
   * filter them by namespace.
   */
  namespaceFilter?(namespace: string, context: KvCodecContext): string | undefined;
  /** The bytes to store for an object (its `metadata.resourceVersion` already removed). */
  encodeValue(object: KubeObject, context: KvCodecContext): Uint8Array;
  /**
   * The object a stored value holds, Kubernetes-shaped (`metadata` at least; name and namespace
   * may be left out, the key's are used). Throw for a value that is not one; the message becomes
   * the malformed entry's reason.
   */
  decodeValue(data: Uint8Array, context: KvValueContext): unknown;
}

/** Whether `value` has the members of a {@link KvCodec}. */
export function isKvCodec(value: unknown): value is KvCodec {
  const codec = value as KvCodec | null;
  return (
    typeof codec === 'object' &&
    codec !== null &&
    typeof codec.name === 'string' &&
    typeof codec.encodeKey === 'function' &&
    typeof codec.decodeKey === 'function' &&
    typeof codec.encodeValue === 'function' &&
    typeof codec.decodeValue === 'function' &&
    (codec.namespaceFilter === undefined || typeof codec.namespaceFilter === 'function')
  );
}

const ENCODER = new TextEncoder();
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The default {@link KvCodec}: keys `<namespace>.<name>`, each part escaped (see {@link encodeKey}),
 * values the object's JSON without `metadata.resourceVersion`.
 *
 * @example
 * const backend = await NatsBackend.connect({ servers, types: [widgets], codecFor: () => convergeCodec });
 */
export const convergeCodec: KvCodec = Object.freeze({
  name: 'converge',
  encodeKey: ({ namespace, name }: { namespace: string; name: string }) => encodeKey(namespace, name),
  decodeKey: (key: string) => decodeKey(key),
  namespaceFilter: (namespace: string) => `${encodeToken(namespace)}.*`,
  encodeValue: (object: KubeObject) => ENCODER.encode(JSON.stringify(object)),
  decodeValue: (data: Uint8Array): unknown => {
    let text: string;
    try {
      text = UTF8.decode(data);
      return JSON.parse(text);
    } catch {
      throw new Error('not UTF-8 JSON');
    }
  },
});
