/**
 * The hash of KEP-5866 sharded list and watch: 64-bit FNV-1a over the UTF-8 bytes of a metadata
 * field, as apimachinery's `sharding.HashField` computes it. Internal to the selector module.
 */

/** 2^64: the exclusive upper end of the hash space. */
export const HASH_SPACE = 0x10000000000000000n;

const utf8 = new TextEncoder();

/**
 * 64-bit FNV-1a of `value`'s UTF-8 bytes, as an unsigned bigint in `[0, 2^64)`: offset basis
 * 0xcbf29ce484222325, prime 0x100000001b3 (= 2^40 + 0x1b3), as Go's `hash/fnv` New64a.
 *
 * Computed on two 32-bit halves in plain numbers (every intermediate stays below 2^53, so it is
 * exact) and made a bigint once: about 20 times faster than bigint arithmetic per byte, which
 * matters when a server filters every event for every sharded watch. The tests check it against
 * a bigint reference.
 *
 * @example
 * fnv1a64(''); // 0xcbf29ce484222325n
 * fnv1a64('a'); // 0xaf63dc4c8601ec8cn
 */
export function fnv1a64(value: string): bigint {
  let hi = 0xcbf29ce4;
  let lo = 0x84222325;
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    if (unit >= 0x80) return hashBytes(utf8.encode(value.slice(i)), hi, lo);
    lo = (lo ^ unit) >>> 0;
    const low = lo * 0x1b3;
    hi = (hi * 0x1b3 + Math.floor(low / 0x100000000) + ((lo << 8) >>> 0)) >>> 0;
    lo = low >>> 0;
  }
  return (BigInt(hi) << 32n) | BigInt(lo);
}

/** Continues the hash `(hi, lo)` over `bytes`. */
function hashBytes(bytes: Uint8Array, hi: number, lo: number): bigint {
  for (const byte of bytes) {
    lo = (lo ^ byte) >>> 0;
    const low = lo * 0x1b3;
    hi = (hi * 0x1b3 + Math.floor(low / 0x100000000) + ((lo << 8) >>> 0)) >>> 0;
    lo = low >>> 0;
  }
  return (BigInt(hi) << 32n) | BigInt(lo);
}

/**
 * A bound as a shard selector writes it: `0x` and 16 lower-case hex digits, or
 * `0x10000000000000000` for 2^64.
 */
export function formatBound(value: bigint): string {
  return `0x${value.toString(16).padStart(16, '0')}`;
}
