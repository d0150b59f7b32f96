import { fnv1a64, formatBound } from '../selector/index.ts';
import { rendezvousWeight, shardOwner } from './rendezvous.ts';

/**
 * The hash slots of uid sharding: the 64-bit FNV-1a space of KEP-5866 `shardRange` split into 64
 * equal slots (slot s covers `[s·2^58, (s+1)·2^58)`: the hash's top six bits). Part of the sharding
 * protocol: every replica of a group must use the same number, so it never changes. A group of
 * more than 64 members leaves the extra members without keys.
 */
export const SHARD_SLOTS = 64;

const SLOT_SHIFT = 58n;
const SLOT_WIDTH = 1n << SLOT_SHIFT;
/** A slot key starts with NUL: no object key (`namespace/name`) or other request key does. */
const SLOT_PREFIX = '\u0000slot/';
const SLOT_NAMES = Object.freeze(Array.from({ length: SHARD_SLOTS }, (_, s) => `slot/${s}`));
const SLOT_KEYS = Object.freeze(SLOT_NAMES.map((name) => `\u0000${name}`));

/**
 * A shard selector that selects (practically) nothing: one hash value, 0. What a member that owns
 * no slot caches — its informer still syncs (empty), and starts listing its share when it gains one.
 */
export const EMPTY_SHARD_SELECTOR =
  "shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000001')";

/** The slot of an object uid: the top six bits of its KEP-5866 hash. */
export function uidSlot(uid: string): number {
  return Number(fnv1a64(uid) >> SLOT_SHIFT);
}

/**
 * The shard key of an object uid in uid sharding: its slot's key. A member that may run the slot
 * key may run every object in the slot; {@link keyOwner} gives its owner.
 *
 * @example
 * member.mayRun(uidShardKey(object.metadata.uid)); // whether this replica owns the object
 */
export function uidShardKey(uid: string): string {
  return SLOT_KEYS[uidSlot(uid)] as string;
}

/**
 * The shard key of a request whose object's uid is unknown here (not cached, no tombstone): no
 * member owns it. Under uid sharding an object outside a member's cache is outside its share.
 */
export const UNOWNED_SHARD_KEY = `${SLOT_PREFIX}none`;

/**
 * The slot a key names; -1 for a key that is not a slot key, -2 for {@link UNOWNED_SHARD_KEY} and
 * any other key with the slot prefix that names no slot.
 */
export function slotOfKey(key: string): number {
  if (!key.startsWith(SLOT_PREFIX)) return -1;
  const slot = Number(key.slice(SLOT_PREFIX.length));
  return Number.isInteger(slot) && slot >= 0 && slot < SHARD_SLOTS && SLOT_KEYS[slot] === key ? slot : -2;
}

/**
 * The owner of `key` among `members`: for a slot key ({@link uidShardKey}) its slot's owner in the
 * {@link slotTable}, nobody for {@link UNOWNED_SHARD_KEY}, for any other key {@link shardOwner}
 * (rendezvous hashing of the key).
 */
export function keyOwner(key: string, members: readonly string[]): string | undefined {
  const slot = slotOfKey(key);
  if (slot === -1) return shardOwner(key, members);
  return slot < 0 ? undefined : slotTable(members)[slot];
}

const tables = new WeakMap<readonly string[], readonly string[]>();
/** The last few tables by their members' text, for arrays that are not frozen (or new per read). */
const recent = new Map<string, readonly string[]>();
const RECENT_TABLES = 16;

/**
 * The owner of each of the {@link SHARD_SLOTS} slots among `members` (an empty table without
 * members): rendezvous hashing with bounded loads. Every member gets ⌊64/n⌋ or ⌈64/n⌉ slots (so
 * each caches and runs an equal share), and pairs are taken in order of their rendezvous weight —
 * a slot goes to the member that wants it most among those not yet full — so a change of members
 * moves few slots beyond those it must. Deterministic: the same members, in any order and with
 * duplicates, give the same table on every replica. Cached per frozen members array, and the last
 * 16 by their text.
 *
 * @example
 * slotTable(['a', 'b'])[uidSlot(pod.metadata.uid)]; // the member that owns the Pod
 */
export function slotTable(members: readonly string[]): readonly string[] {
  const cached = tables.get(members);
  if (cached !== undefined) return cached;
  const text = members.join('\u0000');
  let table = recent.get(text);
  if (table === undefined) {
    table = computeTable(members);
    recent.set(text, table);
    if (recent.size > RECENT_TABLES) recent.delete(recent.keys().next().value as string);
  }
  if (Object.isFrozen(members)) tables.set(members, table);
  return table;
}

function computeTable(given: readonly string[]): readonly string[] {
  const members = [...new Set(given)].sort();
  const n = members.length;
  if (n === 0) return Object.freeze([]);
  const base = Math.floor(SHARD_SLOTS / n);
  // Members that may take one slot above `base`, so that the loads add up to exactly 64.
  let larger = SHARD_SLOTS % n;
  const pairs: { weight: number; slot: number; member: number }[] = [];
  for (let slot = 0; slot < SHARD_SLOTS; slot++) {
    for (let member = 0; member < n; member++) {
      pairs.push({
        weight: rendezvousWeight(SLOT_NAMES[slot] as string, members[member] as string),
        slot,
        member,
      });
    }
  }
  // Heaviest first; equal weights (53-bit: practically never) by slot, then member, for determinism.
  pairs.sort((a, b) => b.weight - a.weight || a.slot - b.slot || a.member - b.member);
  const owner = new Array<string | undefined>(SHARD_SLOTS).fill(undefined);
  const load = new Array<number>(n).fill(0);
  let assigned = 0;
  for (const { slot, member } of pairs) {
    if (owner[slot] !== undefined) continue;
    const current = load[member] as number;
    if (current >= base + 1 || (current === base && larger === 0)) continue;
    if (current === base) larger--;
    load[member] = current + 1;
    owner[slot] = members[member];
    if (++assigned === SHARD_SLOTS) break;
  }
  return Object.freeze(owner as string[]);
}

/** The slots `identity` owns in the {@link slotTable} of `members`, ascending. */
export function slotsOf(identity: string, members: readonly string[]): number[] {
  const table = slotTable(members);
  const out: number[] = [];
  for (let slot = 0; slot < table.length; slot++) if (table[slot] === identity) out.push(slot);
  return out;
}

/**
 * The KEP-5866 shard selector of a set of slots: one `shardRange` over `object.metadata.uid` per
 * run of adjacent slots, or {@link EMPTY_SHARD_SELECTOR} for none.
 *
 * @example
 * slotsSelector([0, 1, 5]);
 * // "shardRange(object.metadata.uid, '0x0000000000000000', '0x0800000000000000') || shardRange(…'0x1400000000000000', '0x1800000000000000')"
 */
export function slotsSelector(slots: Iterable<number>): string {
  const sorted = [...new Set(slots)].filter((s) => Number.isInteger(s) && s >= 0 && s < SHARD_SLOTS);
  sorted.sort((a, b) => a - b);
  if (sorted.length === 0) return EMPTY_SHARD_SELECTOR;
  const ranges: string[] = [];
  let start = sorted[0] as number;
  let end = start + 1;
  const flush = (): void => {
    ranges.push(
      `shardRange(object.metadata.uid, '${formatBound(BigInt(start) * SLOT_WIDTH)}', '${formatBound(BigInt(end) * SLOT_WIDTH)}')`,
    );
  };
  for (const slot of sorted.slice(1)) {
    if (slot === end) {
      end++;
      continue;
    }
    flush();
    start = slot;
    end = slot + 1;
  }
  flush();
  return ranges.join(' || ');
}
