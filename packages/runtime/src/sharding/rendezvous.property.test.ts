import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rendezvousWeight, shardOwner } from './rendezvous.ts';

const identity = fc.stringMatching(/^[a-z][a-z0-9-]{0,12}$/);
const members = fc.uniqueArray(identity, { minLength: 1, maxLength: 8 });
const keys = fc.uniqueArray(fc.string({ maxLength: 30 }), { minLength: 1, maxLength: 200 });

describe('shardOwner', () => {
  it('is deterministic and ignores the order of members and duplicates', () => {
    fc.assert(
      fc.property(members, keys, fc.integer(), (ms, ks, seed) => {
        const shuffled = [...ms, ...ms].sort((a, b) => (a + seed).localeCompare(b + seed));
        for (const key of ks) expect(shardOwner(key, shuffled)).toBe(shardOwner(key, ms));
      }),
    );
  });

  it('gives every key exactly one owner, a member', () => {
    fc.assert(
      fc.property(members, keys, (ms, ks) => {
        for (const key of ks) expect(ms).toContain(shardOwner(key, ms));
      }),
    );
    expect(shardOwner('k', [])).toBeUndefined();
  });

  it('moves only keys to a member that joins', () => {
    fc.assert(
      fc.property(members, identity, keys, (ms, joiner, ks) => {
        fc.pre(!ms.includes(joiner));
        for (const key of ks) {
          const after = shardOwner(key, [...ms, joiner]);
          if (after !== joiner) expect(after).toBe(shardOwner(key, ms));
        }
      }),
    );
  });

  it('moves only the keys of a member that leaves', () => {
    fc.assert(
      fc.property(members, keys, fc.nat(), (ms, ks, which) => {
        fc.pre(ms.length > 1);
        const leaver = ms[which % ms.length] as string;
        const rest = ms.filter((m) => m !== leaver);
        for (const key of ks) {
          const before = shardOwner(key, ms);
          if (before !== leaver) expect(shardOwner(key, rest)).toBe(before);
        }
      }),
    );
  });

  it('moves about 1/n of the keys to a joiner and spreads keys evenly', () => {
    const ks = Array.from({ length: 20_000 }, (_, i) => `default/object-${i}`);
    for (const n of [1, 2, 3, 4, 8]) {
      const ms = Array.from({ length: n }, (_, i) => `replica-${i}`);
      const moved = ks.filter((k) => shardOwner(k, [...ms, 'joiner']) === 'joiner').length / ks.length;
      expect(moved).toBeGreaterThan((1 / (n + 1)) * 0.9);
      expect(moved).toBeLessThan((1 / (n + 1)) * 1.1);
      const counts = new Map<string, number>();
      for (const k of ks)
        counts.set(shardOwner(k, ms) as string, (counts.get(shardOwner(k, ms) as string) ?? 0) + 1);
      for (const count of counts.values())
        expect(Math.abs(count - ks.length / n)).toBeLessThan((ks.length / n) * 0.1);
    }
  });

  it('keeps the weights of the protocol: owners never change between versions', () => {
    const ms = ['replica-a', 'replica-b', 'replica-c'];
    expect(['default/web', 'kube-system/dns', 'x', ''].map((k) => shardOwner(k, ms))).toEqual([
      'replica-a',
      'replica-a',
      'replica-b',
      'replica-a',
    ]);
    expect(rendezvousWeight('default/web', 'replica-a')).toBe(6369218789101401);
    expect(rendezvousWeight('', 'replica-b')).toBe(2468108306023882);
  });
});
