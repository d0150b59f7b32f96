import type { Fence } from '../backend/index.ts';
import { TimeoutError } from '../backend/index.ts';
import { jitter, sleepOn } from '../clock/index.ts';
import { AbortedError, AlreadyStartedError, OptionsError } from '../errors.ts';
import type { Logger } from '../log/index.ts';
import type { LeaderElection } from '../runnable/index.ts';
import { scopedSignal } from '../runnable/index.ts';
import { type AttemptOutcome, type Observation, tryAcquireOrRenew } from './attempt.ts';
import { LeaderLostError, type LeaderStalledError, LeaderSupersededError } from './errors.ts';
import {
  JITTER_FACTOR,
  type LeaderElectorOptions,
  type ResolvedElectorOptions,
  resolveElectorOptions,
} from './options.ts';
import { formatMicroTime, type LeaderRecord } from './record.ts';
import { releaseLock, workReturned } from './release.ts';
import { LeaderTerm, type TermEnd } from './term.ts';

/** What a {@link LeaderElector} calls as leadership comes and goes. Errors thrown are logged. */
export interface LeaderCallbacks {
  /**
   * Leadership was won. Run leader-gated work under `signal`: it aborts when leadership ends, by
   * the renew deadline after the last successful renewal at the latest. A returned promise is
   * awaited (up to that deadline) before the lock is released on stop.
   */
  onStartedLeading?(signal: AbortSignal): void | Promise<void>;
  /** Leadership ended (after the leading signal aborted and, on stop, after the release). */
  onStoppedLeading?(): void;
  /** Someone (this elector included) was seen holding the lock who was not seen before. */
  onNewLeader?(identity: string): void;
}

/**
 * The phase of an elector:
 * - `idle`: not running;
 * - `standby`: running, trying to acquire every retry period (jittered);
 * - `leading`: holding the lock, renewing every retry period;
 * - `stopping`: leadership ended; waiting for leader-gated work, releasing, calling back.
 */
export type ElectorPhase = 'idle' | 'standby' | 'leading' | 'stopping';

type State =
  | { readonly phase: 'idle' }
  | { readonly phase: 'standby' }
  | { readonly phase: 'leading'; readonly term: LeaderTerm }
  | { readonly phase: 'stopping'; readonly term: LeaderTerm };

/**
 * Leader election with client-go's algorithm over any {@link LeaderLock}. A standby takes the lock
 * only when the record is held by itself, released, or unchanged for the record's lease duration
 * *by its own clock* (it never trusts another node's timestamps). The leader renews every retry
 * period; if no renewal succeeds within the renew deadline its leading signal aborts, at the
 * deadline, and it does not lead again in this run. Every write names the version it read, so at
 * most one of two racing electors wins.
 *
 * The watchdog. Renewals share the event loop with reconciles: a synchronous stall (a huge
 * `JSON.parse`, a CPU-bound loop, SIGSTOP) longer than the renew deadline lets the lease expire
 * while the process still believes it leads, and after the stall overdue callbacks run in no
 * promised order — a reconcile continuation may run before the deadline timer. A stalled process
 * cannot know whether a standby took the lease meanwhile, and two leaders must never act at once,
 * so the elector measures the clock instead of trusting its timers: every renewal tick checks the
 * time since the last successful renewal before touching the lock, {@link LeaderElector.isLeader}
 * does the same synchronously, and either steps down (a {@link LeaderStalledError}) when it is past
 * the renew deadline, or when the clock went backwards.
 *
 * Not fencing: a stalled leader can only find out afterwards. Writers that can should pass
 * {@link LeaderElector.fencingToken} (the record's leaderTransitions) to the target so it rejects
 * stale leaders, and leader-gated work must honour its signal.
 *
 * It implements the Manager's `LeaderElection`: `new Manager({ leaderElection: elector })`.
 *
 * @example
 * const elector = new LeaderElector({ lock: new LeaseLock({ backend, namespace, name: 'my-operator', identity }) });
 * await elector.run(signal, {
 *   onStartedLeading: async (leading) => { await controller.start(leading); },
 *   onNewLeader: (id) => logger.info({ leader: id }, 'New leader'),
 * });
 */
export class LeaderElector implements LeaderElection {
  readonly #o: ResolvedElectorOptions;
  #acquired: Promise<void> = Promise.resolve();
  readonly #logger: Logger;
  #state: State = { phase: 'idle' };
  #observed: Observation | undefined;
  #reported = '';
  #fence: Fence | undefined;

  constructor(options: LeaderElectorOptions) {
    this.#o = resolveElectorOptions(options);
    this.#logger = this.#o.logger.child({
      component: 'leader-election',
      lock: this.#o.name,
      identity: this.#o.identity,
    });
  }

  get identity(): string {
    return this.#o.identity;
  }

  get phase(): ElectorPhase {
    return this.#state.phase;
  }

  /**
   * True while leading. Checks the clock against the renew deadline synchronously, so it is
   * false — and leadership is given up — as soon as the deadline passed, even if the event loop
   * was too busy to run the deadline timer. Check it before acting on leadership.
   */
  get isLeader(): boolean {
    return this.#state.phase === 'leading' && this.#state.term.check();
  }

  /** The record's leaderTransitions while leading (it rises with every change of holder); else undefined. */
  get fencingToken(): number | undefined {
    return this.isLeader && this.#state.phase === 'leading' ? this.#state.term.fencingToken : undefined;
  }

  /**
   * The fence of the term acquired last: the lock's name (`default/my-operator`), this identity and
   * the term's fencing token as its epoch. Kept after the term ended (see {@link LeaderElection.fence}).
   */
  fence(): Fence | undefined {
    return this.#fence;
  }

  /**
   * Rewrites the lock's record, which this replica holds, with `leaderTransitions` of at least
   * `min`, and makes that the term's fencing token and fence: for a backend whose fence mark is
   * already past the term's epoch because the lock's history restarted (a Lease deleted by hand
   * and created again counts from 0). Safe because this replica holds the lock now: every earlier
   * holder's fence is below `min`. Rejects when not leading, or when the write fails (a conflict:
   * someone else wrote the record; the term then ends at its next renewal if it lost the lock).
   */
  async raiseFencingToken(min: number, signal?: AbortSignal): Promise<Fence> {
    const state = this.#state;
    const observed = this.#observed;
    if (state.phase !== 'leading' || !state.term.check() || observed === undefined)
      throw new AbortedError(`cannot raise the fencing token of ${this.#o.name}: not leading`);
    if (!Number.isSafeInteger(min) || min < 0) throw new OptionsError('min', min, 'a non-negative integer');
    const term = state.term;
    if (term.fencingToken < min) {
      const { clock, lock } = this.#o;
      const startedAt = clock.now();
      const next: LeaderRecord = {
        ...observed.record,
        renewTime: formatMicroTime(startedAt),
        leaderTransitions: min,
      };
      const version = await lock.update(next, observed.version, signal ?? new AbortController().signal);
      this.#observed = { record: next, version, observedAt: startedAt };
      term.raiseFencingToken(min);
      term.renewed(startedAt);
      this.#logger.warn(
        { fencingToken: min },
        "Raised the lock's leaderTransitions to the backend's fence mark (the lock's history restarted)",
      );
    }
    this.#fence = { name: this.#o.name, holder: this.identity, epoch: term.fencingToken };
    return this.#fence;
  }

  /** The holder in the record last read or written; undefined if none (or released). */
  get leader(): string | undefined {
    const holder = this.#observed?.record.holderIdentity;
    return holder === '' ? undefined : holder;
  }

  /** The record last read or written. */
  get observedRecord(): LeaderRecord | undefined {
    return this.#observed?.record;
  }

  /**
   * Runs until `signal` aborts: acquires, calls `onStartedLeading`, renews. On stop, the leading
   * signal aborts, leader-gated work is awaited (up to the renew deadline), the lock is released
   * (`releaseOnCancel`) and the promise resolves. If leadership is lost instead, the leading
   * signal aborts with a {@link LeaderLostError} and the promise rejects with it: the process
   * should exit. Runs once at a time; may run again after it settled.
   */
  async run(signal: AbortSignal, callbacks: LeaderCallbacks = {}): Promise<void> {
    if (this.#state.phase !== 'idle') throw new AlreadyStartedError(`leader elector ${this.#o.name}`);
    this.#state = { phase: 'standby' };
    try {
      const term = await this.#acquire(signal, callbacks);
      if (term === undefined) return;
      const work = this.#startWork(term, callbacks);
      await this.#renew(term, signal, callbacks);
      const end = term.ended as TermEnd;
      if (end.type === 'stopped' && this.#o.releaseOnCancel) await this.#release(work, term);
      this.#call('onStoppedLeading', () => callbacks.onStoppedLeading?.());
      if (end.type === 'lost') throw end.error;
    } finally {
      this.#state = { phase: 'idle' };
    }
  }

  /**
   * The Manager's `LeaderElection`: runs the elector and resolves with the leading signal once
   * leading. Rejects if `signal` aborts first. On loss the leading signal aborts with a
   * {@link LeaderLostError}.
   */
  acquire(signal: AbortSignal): Promise<AbortSignal> {
    return new Promise<AbortSignal>((resolve, reject) => {
      let leading: AbortSignal | undefined;
      const run = this.run(signal, {
        onStartedLeading: (s) => {
          leading = s;
          resolve(s);
        },
      }).then(
        () => {
          if (leading === undefined)
            reject(new AbortedError('leader election stopped before leading', { cause: signal.reason }));
        },
        (error: unknown) => {
          if (leading === undefined)
            reject(
              error instanceof Error ? error : new AbortedError('leader election failed', { cause: error }),
            );
        },
      );
      this.#acquired = run.then(
        () => undefined,
        () => undefined,
      );
    });
  }

  /**
   * Resolves once the election started by {@link acquire} has ended — after the lease was released
   * on stop (`releaseOnCancel`). The Manager awaits it so a process never exits before its release
   * write is done (a standby then takes over within one retry period, not a lease duration).
   */
  stopped(): Promise<void> {
    return this.#acquired;
  }

  async #acquire(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<LeaderTerm | undefined> {
    this.#logger.info({}, 'Attempting to acquire leader lease');
    const { clock, retryPeriodMs } = this.#o;
    while (!signal.aborted) {
      const outcome = await this.#attempt(signal, undefined, false);
      this.#observe(outcome, callbacks);
      if (outcome.type === 'holding' && !signal.aborted) {
        const fencingToken = outcome.observation.record.leaderTransitions;
        const term = new LeaderTerm(
          clock,
          this.identity,
          this.#o.renewDeadlineMs,
          outcome.startedAt,
          fencingToken,
          (end) => this.#ended(term, end),
        );
        if (term.check()) {
          this.#state = { phase: 'leading', term };
          this.#fence = { name: this.#o.name, holder: this.identity, epoch: fencingToken };
          this.#logger.info({ fencingToken }, 'Successfully acquired lease');
          return term;
        }
      } else if (outcome.type === 'failed' && !signal.aborted) {
        this.#logger.debug({ err: outcome.error }, 'Failed to acquire lease');
      }
      try {
        await sleepOn(clock, jitter(clock, retryPeriodMs, JITTER_FACTOR), signal);
      } catch {
        break;
      }
    }
    return undefined;
  }

  async #renew(term: LeaderTerm, signal: AbortSignal, callbacks: LeaderCallbacks): Promise<void> {
    const onStop = (): void => term.stop(signal.reason);
    if (signal.aborted) onStop();
    else signal.addEventListener('abort', onStop, { once: true });
    try {
      let fastPath = true;
      while (term.active) {
        try {
          await sleepOn(this.#o.clock, this.#o.retryPeriodMs, term.signal);
        } catch {
          break;
        }
        // The watchdog: a tick that finds the deadline passed steps down before touching the lock.
        if (!term.check()) break;
        const outcome = await this.#attempt(signal, term, fastPath);
        if (!term.active) {
          // Stopped (or lost) while this renewal was on the wire. It was not aborted: a request
          // already sent may land anyway, and then only its answer names the version a release
          // must name. Keep what it wrote, so the release does not conflict with our own write.
          if (outcome.type === 'holding' && term.ended?.type === 'stopped')
            this.#observed = outcome.observation;
          break;
        }
        this.#observe(outcome, callbacks);
        if (outcome.type === 'holding') {
          fastPath = true;
          term.renewed(outcome.startedAt);
        } else if (outcome.type === 'held') {
          term.lose(new LeaderSupersededError(this.identity, outcome.observation.record.holderIdentity));
        } else if (outcome.type === 'interrupted') {
          term.lose(
            new LeaderLostError(this.identity, `${this.identity} lost leadership: ${outcome.reason}`),
          );
        } else {
          fastPath = false;
          this.#logger.warn(
            { err: outcome.error, deadlineInMs: term.deadline - this.#o.clock.now() },
            'Failed to renew lease',
          );
        }
      }
    } finally {
      signal.removeEventListener('abort', onStop);
    }
  }

  async #attempt(
    signal: AbortSignal,
    term: LeaderTerm | undefined,
    fastPath: boolean,
  ): Promise<AttemptOutcome> {
    const { clock, renewDeadlineMs } = this.#o;
    // A renewal is not cut short by a stop (see #renew): it ends by its answer or its timeout.
    const sources = term === undefined ? [signal] : [];
    const scoped = scopedSignal(
      clock,
      sources,
      renewDeadlineMs,
      () => new TimeoutError('leader lock call timed out'),
    );
    try {
      return await tryAcquireOrRenew(this.#o, this.#observed, fastPath, scoped.signal, term);
    } finally {
      scoped.dispose();
    }
  }

  #observe(outcome: AttemptOutcome, callbacks: LeaderCallbacks): void {
    const observation = outcome.observation;
    if (observation === undefined) return;
    this.#observed = observation;
    const holder = observation.record.holderIdentity;
    if (holder === '' || holder === this.#reported) return;
    this.#reported = holder;
    this.#logger.info({ leader: holder }, 'New leader elected');
    this.#call('onNewLeader', () => callbacks.onNewLeader?.(holder));
  }

  #ended(term: LeaderTerm, end: TermEnd): void {
    if (this.#state.phase !== 'leading' || this.#state.term !== term) return;
    this.#state = { phase: 'stopping', term };
    if (end.type === 'lost')
      this.#logger.error({ err: end.error }, 'Leader lease lost; leader-gated work stopped');
    else this.#logger.info({}, 'Stopped leading');
  }

  #startWork(term: LeaderTerm, callbacks: LeaderCallbacks): Promise<void> {
    const start = callbacks.onStartedLeading;
    if (start === undefined) return Promise.resolve();
    try {
      return Promise.resolve(start(term.signal)).then(
        () => {},
        (error: unknown) => this.#logger.error({ err: error }, 'Leader-gated work failed'),
      );
    } catch (error) {
      this.#logger.error({ err: error }, 'Leader-gated work failed');
      return Promise.resolve();
    }
  }

  /** Releases the lock once leader-gated work returned, if it does so before the deadline. */
  async #release(work: Promise<void>, term: LeaderTerm): Promise<void> {
    const { clock, lock } = this.#o;
    if (!(await workReturned(clock, work, term.deadline))) {
      this.#logger.warn({}, 'Leader-gated work did not return by the renew deadline; lease not released');
      return;
    }
    this.#observed =
      (await releaseLock(lock, clock, this.#logger, this.#observed, term.deadline)) ?? this.#observed;
  }

  #call(callback: string, fn: () => void): void {
    try {
      fn();
    } catch (error) {
      this.#logger.error({ err: error, callback }, 'Leader election callback failed');
    }
  }
}
