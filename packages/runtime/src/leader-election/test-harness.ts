/**
 * Helpers for the leader-election tests: replicas that record their leading intervals, and a
 * clock that runs at another rate (a paused or stepped one is the public `PausableClock`). Not
 * exported from the module.
 *
 * @internal
 */
import { type Clock, sleepOn, type Timer } from '../clock/index.ts';
import type { LeaderElector } from './elector.ts';

/** One period during which an elector considered itself leader (end: when its signal aborted). */
export interface Interval {
  readonly identity: string;
  readonly start: number;
  end: number | undefined;
  reason: unknown;
}

/** A running elector and what it saw. */
export interface Replica {
  readonly elector: LeaderElector;
  readonly stop: AbortController;
  readonly done: Promise<unknown>;
  readonly intervals: Interval[];
  readonly newLeaders: string[];
  stoppedLeading: number;
  /** Resolves or rejects like `run`. */
  settled: boolean;
  outcome: unknown;
}

/**
 * Runs `elector` until the returned replica's `stop` aborts, recording each leading interval on
 * `clock` (its end is the instant the leading signal aborted).
 */
export function runReplica(
  elector: LeaderElector,
  clock: Clock,
  work?: (signal: AbortSignal) => void | Promise<void>,
): Replica {
  const stop = new AbortController();
  const replica: Replica = {
    elector,
    stop,
    done: Promise.resolve(),
    intervals: [],
    newLeaders: [],
    stoppedLeading: 0,
    settled: false,
    outcome: undefined,
  };
  const done = elector
    .run(stop.signal, {
      onStartedLeading: (signal) => {
        const interval: Interval = {
          identity: elector.identity,
          start: clock.now(),
          end: undefined,
          reason: undefined,
        };
        replica.intervals.push(interval);
        signal.addEventListener('abort', () => {
          interval.end = clock.now();
          interval.reason = signal.reason;
        });
        return work?.(signal);
      },
      onStoppedLeading: () => {
        replica.stoppedLeading++;
      },
      onNewLeader: (identity) => {
        replica.newLeaders.push(identity);
      },
    })
    .then(
      () => undefined,
      (error: unknown) => error,
    )
    .then((outcome) => {
      replica.settled = true;
      replica.outcome = outcome;
      return outcome;
    });
  return Object.assign(replica, { done });
}

/** The first two intervals of different electors that overlap in time, if any. */
export function firstOverlap(intervals: readonly Interval[]): [Interval, Interval] | undefined {
  for (let i = 0; i < intervals.length; i++) {
    for (let j = i + 1; j < intervals.length; j++) {
      const a = intervals[i] as Interval;
      const b = intervals[j] as Interval;
      const aEnd = a.end ?? Number.POSITIVE_INFINITY;
      const bEnd = b.end ?? Number.POSITIVE_INFINITY;
      if (a.start < bEnd && b.start < aEnd) return [a, b];
    }
  }
  return undefined;
}

/**
 * A clock over another that runs at `rate` times its speed from the moment it is made (0.5: half
 * as fast), for clock-rate skew between replicas.
 */
export class RateClock implements Clock {
  readonly #base: Clock;
  readonly #rate: number;
  readonly #origin: number;

  constructor(base: Clock, rate: number) {
    this.#base = base;
    this.#rate = rate;
    this.#origin = base.now();
  }

  now(): number {
    return this.#origin + (this.#base.now() - this.#origin) * this.#rate;
  }

  random(): number {
    return this.#base.random();
  }

  setTimer(callback: () => void, delayMs: number): Timer {
    return this.#base.setTimer(callback, delayMs / this.#rate);
  }

  sleep(delayMs: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, delayMs, signal);
  }
}
