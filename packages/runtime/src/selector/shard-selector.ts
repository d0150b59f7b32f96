import { BadRequestError } from '../backend/index.ts';
import { describe, OptionsError } from '../errors.ts';
import { fnv1a64, formatBound, HASH_SPACE } from './shard-hash.ts';
import { parseShardText, type ShardField, type ShardRange, ShardSyntaxError } from './shard-parser.ts';

export type { ShardField, ShardRange } from './shard-parser.ts';

/** What a shard selector reads of an object: its uid and namespace. */
export interface ShardedObject {
  readonly metadata: { readonly uid?: string | undefined; readonly namespace?: string | undefined };
}

/**
 * A parsed KEP-5866 shard selector (Kubernetes 1.36 `ShardedListAndWatch`, alpha). Made by
 * {@link parseShardSelector}. An object is selected when the 64-bit FNV-1a hash of its `field`
 * (a missing uid or namespace hashes as `''`) falls in one of the `ranges`, each `[start, end)`.
 *
 * @example
 * const selector = parseShardSelector(shardSelectorFor(0, 2));
 * selector.matches({ metadata: { uid: '6f1c…' } });
 */
export interface ShardSelectorExpr {
  /** The field every range hashes. */
  readonly field: ShardField;
  /** The ranges, in the order written; an object in any of them is selected (OR). */
  readonly ranges: readonly ShardRange[];
  /** The 64-bit FNV-1a hash of the object's `field`. */
  hash(object: ShardedObject): bigint;
  /** Whether the object's hash falls in one of the ranges. */
  matches(object: ShardedObject): boolean;
  /** The canonical form, as kube-apiserver prints it: `shardRange(field, '0x…', '0x…') || …`. */
  toString(): string;
}

class CompiledShardSelector implements ShardSelectorExpr {
  readonly field: ShardField;
  readonly ranges: readonly ShardRange[];

  constructor(field: ShardField, ranges: readonly ShardRange[]) {
    this.field = field;
    this.ranges = Object.freeze(ranges.map((r) => Object.freeze({ ...r })));
  }

  hash(object: ShardedObject): bigint {
    const metadata = object.metadata;
    const value = this.field === 'object.metadata.uid' ? metadata.uid : metadata.namespace;
    return fnv1a64(typeof value === 'string' ? value : '');
  }

  matches(object: ShardedObject): boolean {
    const hash = this.hash(object);
    return this.ranges.some((r) => r.start <= hash && hash < r.end);
  }

  toString(): string {
    return this.ranges
      .map((r) => `shardRange(${this.field}, '${formatBound(r.start)}', '${formatBound(r.end)}')`)
      .join(' || ');
  }
}

/**
 * Parses a shard selector in the syntax of Kubernetes' `shardSelector` list and watch parameter
 * (KEP-5866): one or more `shardRange(<field>, '<start>', '<end>')` joined by `||`, where the
 * field is `object.metadata.uid` or `object.metadata.namespace` (every range the same one) and
 * each bound is `'0x'` and exactly 16 lower-case hex digits, or `'0x10000000000000000'` (2^64)
 * for an end; `start < end`, the start inclusive, the end exclusive.
 *
 * Every problem — the empty string included, as kube-apiserver refuses it — throws a
 * {@link BadRequestError} `invalid shard selector: <why>` (a 400 on a server). Callers treat an
 * absent or `''` option as "no sharding" before they parse.
 *
 * @example
 * const selector = parseShardSelector(
 *   "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
 * );
 * selector.ranges; // [{ start: 0n, end: 0x8000000000000000n }]
 */
export function parseShardSelector(text: string): ShardSelectorExpr {
  if (typeof text !== 'string') {
    throw new BadRequestError(`invalid shard selector: expected a string, got ${describe(text)}`);
  }
  try {
    const { field, ranges } = parseShardText(text);
    return new CompiledShardSelector(field, ranges);
  } catch (error) {
    if (error instanceof ShardSyntaxError) {
      throw new BadRequestError(`invalid shard selector: ${error.message}`);
    }
    throw error;
  }
}

/**
 * Whether `object` belongs to the shard `selector` describes (a parsed selector, or its text,
 * parsed on each call — parse once with {@link parseShardSelector} in loops).
 *
 * @example
 * const mine = objects.filter((o) => matchesShard(o, shardSelectorFor(replica, replicas)));
 */
export function matchesShard(object: ShardedObject, selector: ShardSelectorExpr | string): boolean {
  const parsed = typeof selector === 'string' ? parseShardSelector(selector) : selector;
  return parsed.matches(object);
}

/**
 * The shard selector of shard `index` of `count` equal shards of the hash space: shard i covers
 * `[⌊i·2^64/count⌋, ⌊(i+1)·2^64/count⌋)`, the last ending at 2^64, so the `count` selectors are
 * disjoint and together select every object exactly once. `field` is `'uid'` (the default: spreads
 * objects evenly) or `'namespace'` (keeps a namespace's objects together).
 *
 * Throws an {@link OptionsError} unless `count` is a positive safe integer and `index` an integer
 * in `[0, count)`.
 *
 * @example
 * shardSelectorFor(1, 2);
 * // "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')"
 */
export function shardSelectorFor(index: number, count: number, field: 'uid' | 'namespace' = 'uid'): string {
  if (!Number.isSafeInteger(count) || count < 1) {
    throw new OptionsError('count', count, 'a positive integer');
  }
  if (!Number.isSafeInteger(index) || index < 0 || index >= count) {
    throw new OptionsError('index', index, `an integer from 0 to ${count - 1}`);
  }
  if (field !== 'uid' && field !== 'namespace') {
    throw new OptionsError('field', field, '"uid" or "namespace"');
  }
  const n = BigInt(count);
  const start = (HASH_SPACE * BigInt(index)) / n;
  const end = (HASH_SPACE * BigInt(index + 1)) / n;
  return new CompiledShardSelector(`object.metadata.${field}`, [{ start, end }]).toString();
}
