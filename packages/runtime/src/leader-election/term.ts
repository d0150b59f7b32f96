import type { Clock, Timer } from '../clock/index.ts';
import { LeaderLostError, LeaderStalledError } from './errors.ts';

/** How a term ended: stopped on purpose (`reason` is the stop signal's reason), or lost. */
export type TermEnd =
  | { readonly type: 'stopped'; readonly reason: unknown }
  | { readonly type: 'lost'; readonly error: LeaderLostError };

/**
 * One uninterrupted period of leadership, and its safety rule: it ends — its signal aborts — no
 * later than `renewDeadlineMs` after the start of the last renewal that succeeded.
 *
 * Three things enforce the deadline: a timer at the deadline; {@link LeaderTerm.check}, the
 * watchdog, which every renewal tick runs before acting and which `LeaderElector.isLeader` runs
 * synchronously; and {@link LeaderTerm.renewed}, which refuses a renewal whose answer came after
 * the deadline. The watchdog exists because a stalled event loop runs overdue callbacks late and
 * in no promised order: after a stall, a renewal tick or a reconcile continuation may run before
 * the deadline timer. A process that was stalled past its deadline cannot know whether a standby
 * took the lease meanwhile, so it must step down before doing anything else: two leaders must
 * never act at once.
 *
 * @internal
 */
export class LeaderTerm {
  #fencingToken: number;
  readonly #clock: Clock;
  readonly #identity: string;
  readonly #renewDeadlineMs: number;
  readonly #controller = new AbortController();
  readonly #onEnd: (end: TermEnd) => void;
  #renewedAt: number;
  #lastNow: number;
  #timer: Timer;
  #end: TermEnd | undefined;

  constructor(
    clock: Clock,
    identity: string,
    renewDeadlineMs: number,
    startedAt: number,
    fencingToken: number,
    onEnd: (end: TermEnd) => void,
  ) {
    this.#clock = clock;
    this.#identity = identity;
    this.#renewDeadlineMs = renewDeadlineMs;
    this.#fencingToken = fencingToken;
    this.#onEnd = onEnd;
    this.#renewedAt = startedAt;
    this.#lastNow = startedAt;
    this.#timer = this.#arm();
  }

  /** The record's leaderTransitions for this term (raised by {@link LeaderTerm.raiseFencingToken}). */
  get fencingToken(): number {
    return this.#fencingToken;
  }

  /** The lock's record was rewritten with a higher leaderTransitions during the term. */
  raiseFencingToken(token: number): void {
    if (token > this.#fencingToken) this.#fencingToken = token;
  }

  /** Aborts when the term ends, by the deadline at the latest. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get active(): boolean {
    return this.#end === undefined;
  }

  get ended(): TermEnd | undefined {
    return this.#end;
  }

  /** Start of the last successful renewal (or of the acquisition). */
  get renewedAt(): number {
    return this.#renewedAt;
  }

  /** When the term ends unless a renewal succeeds first. */
  get deadline(): number {
    return this.#renewedAt + this.#renewDeadlineMs;
  }

  /**
   * The watchdog: true if the term is active and the clock says its deadline is still ahead;
   * otherwise ends it (a stall if the deadline was passed without the timer noticing, or the clock
   * went backwards) and returns false.
   */
  check(): boolean {
    if (this.#end !== undefined) return false;
    const now = this.#clock.now();
    if (now < this.#lastNow) {
      this.lose(new LeaderStalledError(this.#identity, now - this.#lastNow));
      return false;
    }
    this.#lastNow = now;
    if (now > this.deadline) {
      this.lose(new LeaderStalledError(this.#identity, now - this.#renewedAt));
      return false;
    }
    if (now === this.deadline) {
      this.lose(new LeaderLostError(this.#identity));
      return false;
    }
    return true;
  }

  /** A renewal that started at `startedAt` succeeded: moves the deadline, unless it already passed. */
  renewed(startedAt: number): boolean {
    if (!this.check()) return false;
    this.#renewedAt = Math.max(this.#renewedAt, startedAt);
    this.#timer.cancel();
    this.#timer = this.#arm();
    return true;
  }

  /** Ends the term on purpose. */
  stop(reason: unknown): void {
    this.#finish({ type: 'stopped', reason });
  }

  /** Ends the term because leadership is lost. */
  lose(error: LeaderLostError): void {
    this.#finish({ type: 'lost', error });
  }

  #arm(): Timer {
    return this.#clock.setTimer(
      () => this.lose(new LeaderLostError(this.#identity)),
      this.deadline - this.#clock.now(),
    );
  }

  #finish(end: TermEnd): void {
    if (this.#end !== undefined) return;
    this.#end = end;
    this.#timer.cancel();
    this.#onEnd(end);
    this.#controller.abort(end.type === 'lost' ? end.error : end.reason);
  }
}
