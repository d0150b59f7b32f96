/**
 * The lease key check alone, importable without the NATS client (`@converge/nats/lease-key`): the
 * `converge` command checks `--lease-name` while it parses its flags, for every command, and loading
 * the NATS client for that cost every start a tenth of a second.
 */

const KEY = /^[-/=.\w]+$/;

/** True if `key` is a key the lock accepts (the rules of `KvLeaseName.key`). */
export function isValidLeaseKey(key: unknown): key is string {
  return (
    typeof key === 'string' &&
    KEY.test(key) &&
    !key.startsWith('.') &&
    !key.endsWith('.') &&
    !key.includes('..') &&
    !key.startsWith('_kv')
  );
}
