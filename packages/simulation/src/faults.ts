import { UnknownFaultError } from './errors.ts';

/**
 * The fault classes, each on by default and selectable by name:
 *
 * - `stale-reads` — a process that starts (a restart, a replica) may be served by a lagging API
 *   server replica for a while: lists and gets show an older revision, and its watch holds back
 *   newer events until the replica catches up (Sieve's time travel).
 * - `watch-delay` — watch events arrive late (order kept).
 * - `watch-close` — watches end early: cleanly (the informer re-watches) or with 410 Expired (relist).
 * - `conflicts` — updates and patches fail with 409 Conflict before they apply.
 * - `server-errors` — writes fail with 500, 503 or 429 before they apply, or apply and then time
 *   out (504: the client never learns that the write happened).
 * - `crashes` — the operator process dies right after a backend call (its answer is lost) or as
 *   a watch event arrives, and starts again with empty memory on the same server state.
 * - `outages` — the API server is unavailable for a while: every request fails with 503.
 * - `leader-pause` — with replicas, the leader (sharded: any member) stops (a SIGSTOP, a long GC)
 *   past its lease while another takes over (or the others take its keys), then resumes where it
 *   was.
 * - `lease-loss` — with replicas, someone deletes the leader's Lease (sharded: a member's) by hand;
 *   it is created again with its history restarted.
 */
export const FAULTS = [
  'stale-reads',
  'watch-delay',
  'watch-close',
  'conflicts',
  'server-errors',
  'crashes',
  'outages',
  'leader-pause',
  'lease-loss',
] as const;

export type FaultName = (typeof FAULTS)[number];

/** Parses a comma-separated list (`conflicts,crashes`); `all` or an empty list is every fault, `none` no fault. */
export function parseFaults(list: string | readonly string[]): ReadonlySet<FaultName> {
  const names = (typeof list === 'string' ? list.split(',') : list)
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (names.length === 0 || (names.length === 1 && names[0] === 'all')) return new Set(FAULTS);
  if (names.length === 1 && names[0] === 'none') return new Set();
  const faults = new Set<FaultName>();
  for (const name of names) {
    if (!(FAULTS as readonly string[]).includes(name)) throw new UnknownFaultError(name, FAULTS);
    faults.add(name as FaultName);
  }
  return faults;
}

/**
 * How often each fault fires while faults are on. One table, so that a run's density is a single
 * fact: about one fault in every few dozen backend calls, enough to meet every class in a few
 * seeds without drowning a small scenario.
 */
export const FAULT_RATES = {
  /** Per process start. */
  staleRead: 0.6,
  /** Per watch event. */
  watchDelay: 0.25,
  /** Per watch opened. */
  watchClose: 0.35,
  /** Per update or patch. */
  conflict: 0.08,
  /** Per write. */
  serverError: 0.05,
  /** Per write: applied, then the answer is lost. */
  lostAnswer: 0.03,
  /** Per backend call. */
  crash: 0.03,
  /** Per watch event delivered. */
  crashOnEvent: 0.01,
  /** Per backend call: an outage starts. */
  outage: 0.006,
  /** Per lease renewal seen while faults are on. */
  leaderPause: 0.2,
  /** Per 5 virtual s while faults are on, with replicas: a Lease deleted by hand. */
  leaseLoss: 0.15,
} as const;
