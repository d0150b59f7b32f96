/**
 * What a lock stores about the current leader (client-go's `LeaderElectionRecord`). Times are
 * informational: no elector trusts another node's clock, each judges expiry by when *it* observed a
 * change of the record.
 *
 * @example
 * const record: LeaderRecord = {
 *   holderIdentity: 'pod-a',
 *   leaseDurationMs: 15_000,
 *   acquireTime: formatMicroTime(clock.now()),
 *   renewTime: formatMicroTime(clock.now()),
 *   leaderTransitions: 3,
 * };
 */
export interface LeaderRecord {
  /** Who holds the lock; '' when nobody does (a released lock). */
  readonly holderIdentity: string;
  /** How long others wait after observing a change before they may take the lock. */
  readonly leaseDurationMs: number;
  /** When the holder acquired the lock (RFC 3339 with microseconds, like `metav1.MicroTime`). */
  readonly acquireTime: string;
  /** When the holder last renewed (RFC 3339 with microseconds). */
  readonly renewTime: string;
  /** How many times the holder changed; the fencing token of the current holder. */
  readonly leaderTransitions: number;
}

/** A record as read from a lock, with the version an update must name. */
export interface VersionedRecord {
  readonly record: LeaderRecord;
  /** Opaque version (a resourceVersion, a KV revision); an update naming an older one conflicts. */
  readonly version: string;
}

const MICRO_TIME = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * Formats epoch milliseconds as Kubernetes formats a `MicroTime`: RFC 3339, UTC, six fractional
 * digits.
 *
 * @example
 * formatMicroTime(1_700_000_000_123); // '2023-11-14T22:13:20.123000Z'
 */
export function formatMicroTime(epochMs: number): string {
  if (!Number.isFinite(epochMs)) throw new RangeError(`formatMicroTime: invalid time ${epochMs}`);
  const iso = new Date(Math.floor(epochMs)).toISOString();
  return `${iso.slice(0, -1)}000Z`;
}

/**
 * Parses an RFC 3339 time with up to nine fractional digits (a `MicroTime` or a `Time`) into epoch
 * milliseconds (truncated); undefined if it is not one.
 *
 * @example
 * parseMicroTime('2023-11-14T22:13:20.123456Z'); // 1_700_000_000_123
 */
export function parseMicroTime(text: string): number | undefined {
  const match = MICRO_TIME.exec(text);
  if (match === null) return undefined;
  const [, base, fraction = '', zone = 'Z'] = match;
  const ms = Date.parse(`${base}.${fraction.padEnd(3, '0').slice(0, 3)}${zone.toUpperCase()}`);
  return Number.isNaN(ms) ? undefined : ms;
}

/** True if two records say the same thing. */
export function sameRecord(a: LeaderRecord, b: LeaderRecord): boolean {
  return (
    a.holderIdentity === b.holderIdentity &&
    a.leaseDurationMs === b.leaseDurationMs &&
    a.acquireTime === b.acquireTime &&
    a.renewTime === b.renewTime &&
    a.leaderTransitions === b.leaderTransitions
  );
}
