import { ShardKeyMovedError } from '../sharding/index.ts';
import type { Cause } from '../workqueue/index.ts';
import type { ControllerSharding } from './options.ts';

/** The cause of a request enqueued because the controller's shard member gained its key. */
const SHARD_CAUSE: Cause = Object.freeze({ type: 'manual', source: 'shard' });

/** A reconcile in progress, as resharding sees it. */
export interface RunningRequest<R> {
  readonly request: R;
  readonly settled: Promise<unknown>;
  readonly abort: AbortController | undefined;
}

/** What resharding needs of its controller. */
export interface ReshardTarget<R> {
  removeWhere(predicate: (request: R) => boolean): number;
  running(): Iterable<RunningRequest<R>>;
  readonly queue: {
    has(request: R): boolean;
    add(request: R, options: { readonly cause: Cause }): void;
  };
  /** Whether the controller still takes requests. */
  active(): boolean;
}

/**
 * A controller's side of sharding: which requests it may run, and what it does when its shard
 * member's ownership changes — drop queued requests it lost, abort and wait for running ones,
 * enqueue the requests it gained.
 *
 * @internal
 */
export class ShardedRequests<R> {
  readonly #sharding: ControllerSharding<R>;
  readonly #keyOf: (request: R) => string;

  constructor(sharding: ControllerSharding<R>, keyOf: (request: R) => string) {
    this.#sharding = sharding;
    this.#keyOf = sharding.keyOf ?? keyOf;
  }

  mayRun(request: R): boolean {
    return this.#sharding.member.mayRun(this.#keyOf(request));
  }

  /** Follows the member's changes until the returned function is called. */
  follow(target: ReshardTarget<R>): () => void {
    return this.#sharding.member.onChange(() => this.#reshard(target));
  }

  async #reshard(target: ReshardTarget<R>): Promise<void> {
    const lost = (request: R): boolean => !this.mayRun(request);
    target.removeWhere(lost);
    const moved = [...target.running()].filter((r) => lost(r.request));
    for (const r of moved) r.abort?.abort(new ShardKeyMovedError(this.#keyOf(r.request)));
    await Promise.all(moved.map((r) => r.settled));
    // Their results may have queued retries or requeues: drop those too.
    target.removeWhere(lost);
    if (!target.active()) return;
    for (const request of this.#sharding.requests?.() ?? []) {
      if (this.mayRun(request) && !target.queue.has(request))
        target.queue.add(request, { cause: SHARD_CAUSE });
    }
  }
}
