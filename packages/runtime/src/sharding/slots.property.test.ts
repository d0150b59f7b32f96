import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchesShard, parseShardSelector, shardSelectorFor } from '../selector/index.ts';
import { shardOwner } from './rendezvous.ts';
import {
  EMPTY_SHARD_SELECTOR,
  keyOwner,
  SHARD_SLOTS,
  slotOfKey,
  slotsOf,
  slotsSelector,
  slotTable,
  UNOWNED_SHARD_KEY,
  uidShardKey,
  uidSlot,
} from './slots.ts';

const identity = fc.stringMatching(/^[a-z][a-z0-9-]{0,12}$/);
const members = fc.uniqueArray(identity, { minLength: 1, maxLength: 12 });
const uid = fc.uuid();

function loads(table: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const owner of table) out.set(owner, (out.get(owner) ?? 0) + 1);
  return out;
}

describe('uid slots', () => {
  it('a uid is in slot s exactly when shardSelectorFor(s, 64) selects it', () => {
    fc.assert(
      fc.property(uid, (u) => {
        const slot = uidSlot(u);
        expect(slot).toBeGreaterThanOrEqual(0);
        expect(slot).toBeLessThan(SHARD_SLOTS);
        expect(matchesShard({ metadata: { uid: u } }, shardSelectorFor(slot, SHARD_SLOTS))).toBe(true);
        expect(matchesShard({ metadata: { uid: u } }, shardSelectorFor((slot + 1) % 64, SHARD_SLOTS))).toBe(
          false,
        );
      }),
    );
  });

  it('the slot table gives every slot one member, ⌊64/n⌋ or ⌈64/n⌉ each, whatever the order and duplicates', () => {
    fc.assert(
      fc.property(members, fc.integer(), (ms, seed) => {
        const table = slotTable(ms);
        expect(table).toHaveLength(SHARD_SLOTS);
        for (const owner of table) expect(ms).toContain(owner);
        const n = ms.length;
        const counts = loads(table);
        for (const m of ms) {
          const count = counts.get(m) ?? 0;
          expect(count).toBeGreaterThanOrEqual(Math.floor(SHARD_SLOTS / n));
          expect(count).toBeLessThanOrEqual(Math.ceil(SHARD_SLOTS / n));
        }
        const shuffled = [...ms, ...ms].sort((a, b) => (a + seed).localeCompare(b + seed));
        expect(slotTable(shuffled)).toEqual(table);
      }),
    );
    expect(slotTable([])).toEqual([]);
  });

  it('a member that joins moves few slots beyond the share it must take (bounded loads cost a little)', () => {
    for (const n of [1, 2, 3, 4, 5, 8]) {
      let moved = 0;
      const trials = 100;
      for (let t = 0; t < trials; t++) {
        const ms = Array.from({ length: n }, (_, i) => `replica-${t}-${i}`);
        const before = slotTable(ms);
        const after = slotTable([...ms, `joiner-${t}`]);
        for (let s = 0; s < SHARD_SLOTS; s++) if (before[s] !== after[s]) moved++;
      }
      // The least any scheme can move is the joiner's share, 64/(n+1); equal ranges of the hash
      // space would move about half of everything.
      const least = SHARD_SLOTS / (n + 1);
      expect(moved / trials).toBeGreaterThanOrEqual(least - 1);
      expect(moved / trials).toBeLessThanOrEqual(least * 1.7);
    }
  });

  it('slotsSelector selects exactly the uids of its slots, merging neighbours into one range', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 63 }), { maxLength: 64 }),
        fc.array(uid),
        (slots, uids) => {
          const text = slotsSelector(slots);
          const selector = parseShardSelector(text);
          if (slots.length === 0) expect(text).toBe(EMPTY_SHARD_SELECTOR);
          else {
            for (const u of uids)
              expect(selector.matches({ metadata: { uid: u } })).toBe(slots.includes(uidSlot(u)));
            // as many ranges as runs of adjacent slots
            const sorted = [...slots].sort((a, b) => a - b);
            const runs = sorted.filter((s, i) => i === 0 || sorted[i - 1] !== s - 1).length;
            expect(selector.ranges).toHaveLength(runs);
          }
        },
      ),
    );
    expect(slotsSelector([0, 1, 2, 63])).toBe(
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x0c00000000000000') || " +
        "shardRange(object.metadata.uid, '0xfc00000000000000', '0x10000000000000000')",
    );
    expect(slotsSelector(Array.from({ length: 64 }, (_, s) => s))).toBe(shardSelectorFor(0, 1));
  });

  it('keyOwner: slot keys by the table, the unowned key by nobody, any other key by rendezvous', () => {
    fc.assert(
      fc.property(members, uid, fc.string(), (ms, u, key) => {
        const slotKey = uidShardKey(u);
        expect(slotOfKey(slotKey)).toBe(uidSlot(u));
        expect(keyOwner(slotKey, ms)).toBe(slotTable(ms)[uidSlot(u)]);
        expect(slotsOf(keyOwner(slotKey, ms) as string, ms)).toContain(uidSlot(u));
        expect(keyOwner(UNOWNED_SHARD_KEY, ms)).toBeUndefined();
        fc.pre(!key.startsWith('\u0000slot/'));
        expect(slotOfKey(key)).toBe(-1);
        expect(keyOwner(key, ms)).toBe(shardOwner(key, ms));
      }),
    );
    expect(keyOwner('\u0000slot/64', ['a'])).toBeUndefined();
    expect(keyOwner('\u0000slot/07', ['a'])).toBeUndefined();
  });

  it('keeps the table of the protocol: owners never change between versions', () => {
    const table = slotTable(['replica-a', 'replica-b', 'replica-c']);
    expect(table.slice(0, 8)).toMatchInlineSnapshot(`
      [
        "replica-a",
        "replica-c",
        "replica-c",
        "replica-a",
        "replica-a",
        "replica-c",
        "replica-a",
        "replica-a",
      ]
    `);
    expect(uidSlot('6f1c2a9e-0000-4000-8000-000000000001')).toMatchInlineSnapshot(`47`);
  });
});
