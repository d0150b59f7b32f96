import { InvalidError, type LeaderRecord, parseMicroTime } from '@converge/runtime';
import { KvLeaseInvalidError, type KvLeaseLocation } from './errors.ts';

/** The `apiVersion` of the lease document this version of the lock reads and writes. */
export const KV_LEASE_API_VERSION = 'converge.dev/v1';

/** The `kind` of the lease document. */
export const KV_LEASE_KIND = 'KvLease';

/**
 * What a {@link KvLeaseLock} keeps under its key: a versioned JSON document shaped like a
 * `coordination.k8s.io/v1` Lease, so `nats kv get <bucket> <key>` shows who leads.
 *
 * - `spec.holderIdentity` — who holds the lease; `''` when it was released.
 * - `spec.leaseDurationMs` — how long others wait, after they see the entry change, before they
 *   may take it (milliseconds, not the Lease's whole seconds: nothing is rounded).
 * - `spec.acquireTime`, `spec.renewTime` — RFC 3339 with microseconds, informational only (no
 *   elector trusts another node's clock); omitted when empty.
 * - `spec.leaseTransitions` — how many times the holder changed: the fencing token.
 *
 * A missing field (or `spec`) reads as empty (`''` or 0), as a Lease's does; a field of the wrong
 * type (`null` included), a document of another `apiVersion` or `kind`, or bytes that are not
 * UTF-8 JSON make the entry invalid.
 * Fields this version does not know are kept when the lock updates the entry.
 *
 * @example
 * // nats kv get converge-leases default.my-operator
 * {"apiVersion":"converge.dev/v1","kind":"KvLease","spec":{"holderIdentity":"pod-a","leaseDurationMs":15000,
 *  "acquireTime":"2024-05-06T07:08:09.123000Z","renewTime":"2024-05-06T07:09:01.456000Z","leaseTransitions":3}}
 */
export interface KvLeaseDocument {
  readonly apiVersion: typeof KV_LEASE_API_VERSION;
  readonly kind: typeof KV_LEASE_KIND;
  readonly spec: KvLeaseSpec;
  readonly [field: string]: unknown;
}

/** The `spec` of a {@link KvLeaseDocument}. */
export interface KvLeaseSpec {
  readonly holderIdentity?: string;
  readonly leaseDurationMs?: number;
  readonly acquireTime?: string;
  readonly renewTime?: string;
  readonly leaseTransitions?: number;
  readonly [field: string]: unknown;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Reads an entry's bytes as a lease document and its leader record. Never throws anything but a
 * {@link KvLeaseInvalidError} naming the bucket, key, revision and what is wrong.
 *
 * @example
 * const { record } = decodeKvLease(entry.value, { bucket: 'converge-leases', key: 'op', revision: entry.revision });
 */
export function decodeKvLease(
  bytes: Uint8Array,
  where: KvLeaseLocation,
): { readonly document: KvLeaseDocument; readonly record: LeaderRecord } {
  const invalid = (problem: string, cause?: unknown): KvLeaseInvalidError =>
    new KvLeaseInvalidError(where, problem, cause === undefined ? undefined : { cause });
  let parsed: unknown;
  try {
    parsed = JSON.parse(utf8.decode(bytes));
  } catch (error) {
    throw invalid(`the value (${bytes.length} bytes) is not UTF-8 JSON`, error);
  }
  if (!isObject(parsed)) throw invalid('the value is not a JSON object');
  if (parsed.apiVersion !== KV_LEASE_API_VERSION || parsed.kind !== KV_LEASE_KIND) {
    throw invalid(
      `expected apiVersion ${JSON.stringify(KV_LEASE_API_VERSION)} and kind ${JSON.stringify(KV_LEASE_KIND)}, ` +
        `got ${preview(parsed.apiVersion)} and ${preview(parsed.kind)}`,
    );
  }
  const spec = parsed.spec === undefined ? {} : parsed.spec;
  if (!isObject(spec)) throw invalid(`spec must be an object, got ${preview(spec)}`);
  const problem = checkSpec(spec);
  if (problem !== undefined) throw invalid(problem);
  const document = { ...parsed, spec } as KvLeaseDocument;
  return { document, record: specToRecord(document.spec) };
}

/**
 * The bytes of the lease document for `record`. Fields of `base` (the document last read, when
 * the write replaces it) that this version does not know are kept. Rejects a record that could
 * not be read back with an {@link InvalidError}, so the lock never writes what it cannot read.
 *
 * @example
 * await kv.create(key, encodeKvLease(record));
 */
export function encodeKvLease(record: LeaderRecord, base?: KvLeaseDocument): Uint8Array {
  const spec: KvLeaseSpec = {
    ...base?.spec,
    holderIdentity: record.holderIdentity,
    leaseDurationMs: record.leaseDurationMs,
    acquireTime: record.acquireTime,
    renewTime: record.renewTime,
    leaseTransitions: record.leaderTransitions,
  };
  const problem = checkSpec(spec);
  if (problem !== undefined) throw new InvalidError(`cannot write the leader record: ${problem}`);
  // Empty times are omitted, as a Lease omits them; they read back as ''.
  const { acquireTime, renewTime, ...rest } = spec;
  const document = {
    ...base,
    apiVersion: KV_LEASE_API_VERSION,
    kind: KV_LEASE_KIND,
    spec: {
      ...rest,
      ...(acquireTime === '' ? {} : { acquireTime }),
      ...(renewTime === '' ? {} : { renewTime }),
    },
  };
  return encoder.encode(JSON.stringify(document));
}

/** What is wrong with a spec, or undefined if it reads as a leader record. */
function checkSpec(spec: Record<string, unknown>): string | undefined {
  const { holderIdentity = '', leaseDurationMs = 0, leaseTransitions = 0 } = spec;
  if (typeof holderIdentity !== 'string')
    return `spec.holderIdentity must be a string, got ${preview(holderIdentity)}`;
  if (typeof leaseDurationMs !== 'number' || !Number.isFinite(leaseDurationMs) || leaseDurationMs < 0) {
    return `spec.leaseDurationMs must be a number of milliseconds >= 0, got ${preview(leaseDurationMs)}`;
  }
  if (!Number.isSafeInteger(leaseTransitions) || (leaseTransitions as number) < 0) {
    return `spec.leaseTransitions must be an integer >= 0, got ${preview(leaseTransitions)}`;
  }
  for (const field of ['acquireTime', 'renewTime'] as const) {
    const time = spec[field] === undefined ? '' : spec[field];
    if (typeof time !== 'string' || (time !== '' && parseMicroTime(time) === undefined)) {
      return `spec.${field} must be an RFC 3339 time, got ${preview(time)}`;
    }
  }
  return undefined;
}

function specToRecord(spec: KvLeaseSpec): LeaderRecord {
  return {
    holderIdentity: spec.holderIdentity ?? '',
    leaseDurationMs: spec.leaseDurationMs ?? 0,
    acquireTime: spec.acquireTime ?? '',
    renewTime: spec.renewTime ?? '',
    leaderTransitions: spec.leaseTransitions ?? 0,
  };
}

/** A short JSON rendering of a value for an error message. */
function preview(value: unknown): string {
  const text = value === undefined ? 'nothing' : (JSON.stringify(value) ?? typeof value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
