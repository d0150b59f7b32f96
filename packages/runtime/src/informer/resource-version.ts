const DECIMAL = /^(0|[1-9][0-9]*)$/;

/**
 * True when `received` is provably older than `previous`. Resource versions are opaque strings in
 * general; only when both are plain decimal integers (etcd revisions, NATS KV revisions, the store's
 * counter) can they be ordered, and only then can a regression be seen. Any other pair is never
 * called older.
 */
export function isOlderResourceVersion(received: string, previous: string): boolean {
  if (received === '' || previous === '' || !DECIMAL.test(received) || !DECIMAL.test(previous)) return false;
  if (received.length !== previous.length) return received.length < previous.length;
  return received < previous;
}
