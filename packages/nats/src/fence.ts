import { checkFence, type Fence, FencedError } from '@converge/runtime';
import type { RawEntry } from './codec.ts';
import { encodeToken } from './keys.ts';

/*
 * Fencing on nats-server 2.9. A write must be refused when a higher epoch of its fence's name was
 * announced, in the same step as it commits. JetStream can make a publish conditional on its own
 * subject's last sequence (a KV revision) and on the *stream's* last sequence, nothing else (a
 * condition on another subject came in 2.11). So each bucket keeps its own mark of every fence
 * name, as an entry of its own stream, and a fenced write goes:
 *
 * 1. read the stream's last sequence L;
 * 2. read the mark of the fence's name: a higher epoch (or the same epoch from another holder)
 *    refuses the write at once; a lower or missing mark is raised to the write's fence, on
 *    condition that the stream is still at L (then L is the mark's revision);
 * 3. publish the object on condition that its key is still at the revision the write read and that
 *    the stream is still at L.
 *
 * A mark raised after step 1 moves the stream past L, so step 3 fails and the write starts again
 * at step 1, where it meets the new mark. A mark raised before step 1 is read in step 2. So no
 * write with a stale epoch lands after a higher mark, in any bucket that holds the mark; any other
 * write to the bucket between steps 1 and 3 also sends the write round again (bounded: see
 * FENCED_ATTEMPTS). Steps 1 and 2 cost two round trips; a process's next fenced write with the
 * same fence skips them, on condition that the stream is still at its previous write's revision
 * (TypeBucket keeps it), and one process's fenced writes to a bucket go one at a time.
 */

/**
 * Keys of the fence marks: `converge-fence-<name as a key token>`. Like the bucket marker, it has
 * no `.`, so it is never the key of an object this backend writes; lists, watches and the
 * collector skip it.
 */
export const FENCE_KEY_PREFIX = 'converge-fence-';

/** How many times a fenced write starts again because its bucket's stream moved under it. */
export const FENCED_ATTEMPTS = 64;

/** The key of the mark of fence `name`. */
export function fenceKey(name: string): string {
  return `${FENCE_KEY_PREFIX}${encodeToken(name)}`;
}

/** Whether a KV key is a fence mark's. */
export function isFenceKey(key: string): boolean {
  return key.startsWith(FENCE_KEY_PREFIX);
}

const ENCODER = new TextEncoder();
const DECODER = new TextDecoder();

/** The stored form of a mark. */
export function encodeMark(fence: Fence): Uint8Array {
  return ENCODER.encode(JSON.stringify({ name: fence.name, holder: fence.holder, epoch: fence.epoch }));
}

/**
 * The mark an entry holds; undefined for a delete marker (a mark removed by hand). A value that
 * is not a mark (written by something else under a mark's key) is an error: a fence the backend
 * cannot read must not let writes through.
 */
export function decodeMark(entry: RawEntry, name: string): Fence | undefined {
  if (entry.operation !== 'PUT') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(DECODER.decode(entry.data));
    checkFence(parsed);
  } catch (error) {
    throw new FencedError(
      `the fence mark of "${name}" at revision ${entry.seq} is not a fence (${(error as Error).message}); ` +
        'writes for it are refused until it is removed or overwritten by an announcement',
      { cause: error },
    );
  }
  if (parsed.name !== name) {
    throw new FencedError(
      `the fence mark under the key of "${name}" at revision ${entry.seq} names "${parsed.name}"`,
    );
  }
  return parsed;
}

/**
 * How `fence` stands against `mark`: `stale` (refused), `current` (accepted as it is) or `higher`
 * (accepted, and the mark is raised to it) — the rule of the store's FenceTable.
 */
export function compareFence(fence: Fence, mark: Fence | undefined): 'stale' | 'current' | 'higher' {
  if (mark === undefined || fence.epoch > mark.epoch) return 'higher';
  if (fence.epoch < mark.epoch || fence.holder !== mark.holder) return 'stale';
  return 'current';
}
