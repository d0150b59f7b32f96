import type { ObjectKey } from '@converge/runtime';

/*
 * Internal keys order objects of one type by namespace, then name (byte order): `namespace`, NUL,
 * `name`. Namespaces and names are validated DNS names, so they never contain NUL and the tuple
 * order equals the string order.
 */

/** The internal key of `namespace/name`. */
export function encodeKey(namespace: string, name: string): string {
  return `${namespace}\u0000${name}`;
}

/** The `{ namespace, name }` of an internal key. */
export function decodeKey(key: string): ObjectKey {
  const nul = key.indexOf('\u0000');
  return { namespace: key.slice(0, nul), name: key.slice(nul + 1) };
}

/** The namespace part of an internal key. */
export function namespaceOfKey(key: string): string {
  return key.slice(0, key.indexOf('\u0000'));
}

/** The half-open key range `[lo, hi)` of one namespace, or of everything when `namespace` is ''. */
export function namespaceRange(namespace: string): { readonly lo: string; readonly hi: string | undefined } {
  return namespace === ''
    ? { lo: '', hi: undefined }
    : { lo: `${namespace}\u0000`, hi: `${namespace}\u0001` };
}
