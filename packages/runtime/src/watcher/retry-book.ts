import type { Clock, Timer } from '../clock/index.ts';
import type { Logger } from '../log/index.ts';
import type { ObjectKey } from '../object/index.ts';
import type { RetryDecision, RetryPolicy } from '../workqueue/index.ts';
import type { Call } from './informer-controller-handlers.ts';
import type { LaneTask, ObjectLanes } from './object-lanes.ts';

/** A call to be made again: a retry after a failure, or a requeue a handler asked for. */
export interface ScheduledCall<O> {
  /** The handler it belongs to (its identity, never an index). */
  readonly owner: O;
  /** The object's lane. */
  readonly lane: string;
  readonly key: ObjectKey;
  readonly call: Call;
  /** The error of the failed call; undefined for a requeue. */
  readonly error: Error | undefined;
  /** Calls made so far for this event. */
  readonly attempts: number;
}

interface Pending<O> extends ScheduledCall<O> {
  readonly task: LaneTask;
  timer: Timer | undefined;
}

/**
 * The pending retries and requeues of an informer controller, by handler and object. A scheduled
 * call waits on an exact timer of the clock, then joins its object's lane — behind whatever the
 * object is busy with, so it never runs beside another handler of the object — and stops being
 * pending when it starts. Dropping one cancels its timer or takes it back out of the lane.
 */
export class RetryBook<O> {
  readonly #clock: Clock;
  readonly #lanes: ObjectLanes<LaneTask>;
  readonly #run: (scheduled: ScheduledCall<O>) => Promise<void>;
  readonly #byOwner = new Map<O, Map<string, Set<Pending<O>>>>();
  #size = 0;

  constructor(
    clock: Clock,
    lanes: ObjectLanes<LaneTask>,
    run: (scheduled: ScheduledCall<O>) => Promise<void>,
  ) {
    this.#clock = clock;
    this.#lanes = lanes;
    this.#run = run;
  }

  /** Scheduled calls not started yet (waiting for their time or in their object's lane). */
  get size(): number {
    return this.#size;
  }

  /** Makes `scheduled.call` again after `delayMs`, in its object's lane. */
  schedule(scheduled: ScheduledCall<O>, delayMs: number): void {
    const pending: Pending<O> = {
      ...scheduled,
      task: { run: () => (this.#take(pending) ? this.#run(scheduled) : Promise.resolve()) },
      timer: undefined,
    };
    let byLane = this.#byOwner.get(scheduled.owner);
    if (byLane === undefined) {
      byLane = new Map();
      this.#byOwner.set(scheduled.owner, byLane);
    }
    let set = byLane.get(scheduled.lane);
    if (set === undefined) {
      set = new Set();
      byLane.set(scheduled.lane, set);
    }
    set.add(pending);
    this.#size++;
    pending.timer = this.#clock.setTimer(() => {
      pending.timer = undefined;
      this.#lanes.push(pending.lane, pending.task);
    }, delayMs);
  }

  /** Drops the pending calls of `owner` for the object `lane` that `drop` selects. */
  dropWhere(owner: O, lane: string, drop: (scheduled: ScheduledCall<O>) => boolean): void {
    const set = this.#byOwner.get(owner)?.get(lane);
    if (set === undefined) return;
    for (const pending of [...set]) if (drop(pending)) this.#drop(pending);
  }

  /** Drops every pending call of `owner`. */
  dropOwner(owner: O): void {
    for (const set of [...(this.#byOwner.get(owner)?.values() ?? [])]) {
      for (const pending of [...set]) this.#drop(pending);
    }
  }

  /** Drops every pending call. */
  dropAll(): void {
    for (const owner of [...this.#byOwner.keys()]) this.dropOwner(owner);
  }

  /** Takes `pending` out of the book as it starts; false if it was dropped meanwhile. */
  #take(pending: Pending<O>): boolean {
    const byLane = this.#byOwner.get(pending.owner);
    const set = byLane?.get(pending.lane);
    if (byLane === undefined || set?.delete(pending) !== true) return false;
    this.#size--;
    if (set.size === 0) byLane.delete(pending.lane);
    if (byLane.size === 0) this.#byOwner.delete(pending.owner);
    return true;
  }

  #drop(pending: Pending<O>): void {
    pending.timer?.cancel();
    pending.timer = undefined;
    this.#lanes.remove(pending.lane, pending.task);
    this.#take(pending);
  }
}

/** The wait of a retry policy decision without `delayMs`: the work queue's default backoff. */
const fallbackDelayMs = (failures: number): number => Math.min(5 * 2 ** failures, 1_000_000);

/**
 * How long to wait before retrying a call that failed at `attempt` (0 for the event's call),
 * asking `policy` with `failures: attempt`; undefined if it gives up. A decision without a delay,
 * a bad delay or a throwing policy waits 5 ms · 2^attempt, at most 1000 s.
 */
export function retryDelay(
  policy: RetryPolicy,
  error: Error,
  attempt: number,
  logger: Logger,
): number | undefined {
  let decision: RetryDecision;
  try {
    decision = policy.decide({ failures: attempt, error });
  } catch (policyError) {
    logger.error({ err: policyError, policy: policy.name }, 'Retry policy threw; retrying with backoff');
    return fallbackDelayMs(attempt);
  }
  if (!decision.retry) return undefined;
  const delay: unknown = decision.delayMs;
  if (delay === undefined) return fallbackDelayMs(attempt);
  if (typeof delay !== 'number' || !Number.isFinite(delay) || delay < 0) {
    logger.error({ delayMs: delay, policy: policy.name }, 'Retry policy gave a bad delay; using backoff');
    return fallbackDelayMs(attempt);
  }
  return delay;
}
