import type { ObjectKey, ResourceType } from '@converge/runtime';

/*
 * KV keys. A key is two subject tokens, `<namespace>.<name>`, each escaped so that it holds only
 * the characters `[-/=A-Za-z0-9]` plus the escape character `_`:
 *
 * - `-`, `/`, `=`, ASCII letters and digits stand for themselves;
 * - every other character (`.`, `_`, `*`, `>`, spaces, non-ASCII, …) is `_` followed by the two
 *   lower-case hex digits of each of its UTF-8 bytes (`.` is `_2e`, `_` is `_5f`);
 * - the empty string (the namespace of a cluster-scoped object) is a lone `_`.
 *
 * Each token is a prefix-free code over its characters and never contains `.`, so the key splits
 * back into exactly two tokens and decodes to the one pair it came from: distinct pairs never share
 * a key. Keys never start or end with `.`, never contain `..`, `*` or `>`, and so pass the KV key
 * rules (`[-/_=.a-zA-Z0-9]+`). The namespace token first lets a consumer filter one namespace with
 * the subject `$KV.<bucket>.<namespace>.*`.
 */

const PLAIN = /^[-/=A-Za-z0-9]$/;
const ENCODER = new TextEncoder();
const DECODER = new TextDecoder('utf-8', { fatal: true });
const HEX_BYTE = /^[0-9a-f]{2}$/;

/** The token of one part (namespace or name) of a key. */
export function encodeToken(value: string): string {
  if (value === '') return '_';
  let out = '';
  for (const char of value) {
    if (PLAIN.test(char)) {
      out += char;
      continue;
    }
    for (const byte of ENCODER.encode(char)) out += `_${byte.toString(16).padStart(2, '0')}`;
  }
  return out;
}

/** The part a token stands for, or undefined when the token is not one {@link encodeToken} makes. */
export function decodeToken(token: string): string | undefined {
  if (token === '_') return '';
  if (token === '') return undefined;
  let out = '';
  let bytes: number[] = [];
  const flush = (): boolean => {
    if (bytes.length === 0) return true;
    let text: string;
    try {
      text = DECODER.decode(Uint8Array.from(bytes));
    } catch {
      return false;
    }
    bytes = [];
    // A character that needs no escape, escaped anyway, would give a second token for one value.
    for (const char of text) if (PLAIN.test(char)) return false;
    out += text;
    return true;
  };
  for (let i = 0; i < token.length; ) {
    const char = token.charAt(i);
    if (char === '_') {
      const hex = token.slice(i + 1, i + 3);
      if (!HEX_BYTE.test(hex)) return undefined;
      bytes.push(Number.parseInt(hex, 16));
      i += 3;
      continue;
    }
    if (!PLAIN.test(char)) return undefined;
    if (!flush()) return undefined;
    out += char;
    i++;
  }
  return flush() ? out : undefined;
}

/**
 * The KV key of `namespace/name` (namespace '' for cluster-scoped objects), for reading or writing
 * this backend's buckets with another KV client.
 *
 * @example
 * encodeKey('default', 'web.config'); // 'default.web_2econfig'
 * encodeKey('', 'cluster-thing'); // '_.cluster-thing'
 */
export function encodeKey(namespace: string, name: string): string {
  return `${encodeToken(namespace)}.${encodeToken(name)}`;
}

/**
 * The `{ namespace, name }` of a KV key, or undefined when the key is not one {@link encodeKey} makes.
 *
 * @example
 * decodeKey('default.web_2econfig'); // { namespace: 'default', name: 'web.config' }
 * decodeKey('not-a-key'); // undefined
 */
export function decodeKey(key: string): ObjectKey | undefined {
  const dot = key.indexOf('.');
  if (dot < 0 || key.indexOf('.', dot + 1) >= 0) return undefined;
  const namespace = decodeToken(key.slice(0, dot));
  const name = decodeToken(key.slice(dot + 1));
  if (namespace === undefined || name === undefined) return undefined;
  return { namespace, name };
}

/** Whether `key` is a valid NATS KV key (`[-/_=.a-zA-Z0-9]+`, no leading or trailing `.`). */
export function isValidKvKey(key: string): boolean {
  return /^[-/_=.a-zA-Z0-9]+$/.test(key) && !key.startsWith('.') && !key.endsWith('.');
}

/** Characters a bucket name may hold (the KV client's rule). */
export const BUCKET_NAME = /^[-_A-Za-z0-9]+$/;

/**
 * The default bucket of a type: `prefix` + `<group>_<version>_<plural>`, the group's dots turned
 * into `-` and the core group written `core` (`converge_apps_v1_deployments`,
 * `converge_core_v1_configmaps`, `converge_example-com_v1_widgets`). Two types that map to one
 * bucket are refused when the second is registered.
 */
export function defaultBucketName(prefix: string, type: ResourceType): string {
  const group = type.group === '' ? 'core' : type.group.replaceAll('.', '-');
  return `${prefix}${group}_${type.version}_${type.plural}`;
}
