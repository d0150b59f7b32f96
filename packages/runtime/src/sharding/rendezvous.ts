/**
 * The weight of `member` for `key` in rendezvous (highest random weight) hashing: cyrb53 of the key
 * seeded with a 32-bit hash of the member, a number in [0, 2^53). Part of the sharding protocol:
 * every replica of a group must compute the same weights, so this function never changes.
 */
export function rendezvousWeight(key: string, member: string): number {
  return cyrb53(key, memberSeed(member));
}

/**
 * The owner of `key` among `members` by rendezvous hashing: the member with the highest
 * {@link rendezvousWeight} (ties, which need equal 53-bit weights, go to the smaller identity).
 * Undefined when there are no members. The order of `members` does not matter and duplicates are
 * ignored. Adding a member moves to it only the keys it now wins (about 1/n of them); removing one
 * moves only the keys it owned.
 *
 * @example
 * shardOwner('default/web', ['replica-a', 'replica-b', 'replica-c']); // 'replica-b', on every replica
 */
export function shardOwner(key: string, members: readonly string[]): string | undefined {
  let owner: string | undefined;
  let best = -1;
  for (const member of members) {
    const weight = rendezvousWeight(key, member);
    if (weight > best || (weight === best && owner !== undefined && member < owner)) {
      best = weight;
      owner = member;
    }
  }
  return owner;
}

/** FNV-1a 32-bit over UTF-16 code units: the per-member seed. */
function memberSeed(member: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < member.length; i++) {
    hash ^= member.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** cyrb53 (bryc, public domain): a fast 53-bit string hash with good avalanche. */
function cyrb53(text: string, seed: number): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
