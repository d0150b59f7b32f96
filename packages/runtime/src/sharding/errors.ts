import { ConvergeError, type ConvergeErrorOptions } from '../errors.ts';

/** Stable codes of sharding errors. See docs/errors.md, "Sharding". */
export const ShardingErrorCodes = {
  /** A membership record cannot be read as one (a Lease or KV entry another writer changed). */
  RECORD_INVALID: 'CONVERGE_ERR_SHARD_RECORD_INVALID',
  /** The reason a reconcile's signal aborts when its key moved to another shard member. */
  KEY_MOVED: 'CONVERGE_ERR_SHARD_KEY_MOVED',
} as const;

/**
 * The reason a reconcile's signal aborts when the controller's shard member gave its key to
 * another member: the reconcile should return promptly; its result is ignored and the request is
 * dropped here (the new owner runs it).
 *
 * @example
 * if (signal.reason instanceof ShardKeyMovedError) return done();
 */
export class ShardKeyMovedError extends ConvergeError {
  /** The key that moved. */
  readonly key: string;

  constructor(key: string, options?: ConvergeErrorOptions) {
    super(ShardingErrorCodes.KEY_MOVED, `key ${key} moved to another shard member`, options);
    this.key = key;
  }
}

/**
 * A membership record that is not one: a Lease labelled with the group whose annotations or spec
 * do not parse, a KV entry that is not a member document. Members skip it (it is logged) and
 * never overwrite it; delete it by hand if no replica of that identity runs.
 *
 * @example
 * if (error instanceof ShardRecordInvalidError) logger.error({ record: error.record }, error.message);
 */
export class ShardRecordInvalidError extends ConvergeError {
  /** Where the record lives (`default/shards.replica-a`, `nats:bucket/key`). */
  readonly record: string;

  constructor(record: string, problem: string, options?: ConvergeErrorOptions) {
    super(ShardingErrorCodes.RECORD_INVALID, `invalid membership record ${record}: ${problem}`, options);
    this.record = record;
  }
}
