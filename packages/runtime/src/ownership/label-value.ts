import { createHash } from 'node:crypto';

/** The longest label value Kubernetes accepts. */
export const MAX_LABEL_VALUE_LENGTH = 63;

/** A non-empty Kubernetes label value: alphanumeric at both ends, `-`, `_`, `.` inside. */
const LABEL_VALUE = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** How many base32 characters of the SHA-256 digest a hashed value keeps (200 bits). */
const HASH_CHARS = 40;

/** The shape of every hashed value: `h-` and 40 lower-case base32 characters. */
const HASHED = new RegExp(`^h-[a-z2-7]{${HASH_CHARS}}$`);

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** Whether `value` is a non-empty, valid Kubernetes label value. */
export function isLabelValue(value: string): boolean {
  return value.length <= MAX_LABEL_VALUE_LENGTH && LABEL_VALUE.test(value);
}

/** Whether a label value is a hash made by {@link labelValue} (and so cannot be decoded). */
export function isHashedValue(value: string): boolean {
  return HASHED.test(value);
}

/**
 * `plain` when it is a valid label value that does not look like a hash; otherwise
 * `h-<first 40 base32 characters of sha256(full)>`. Because a plain value shaped like a hash is
 * hashed too, a hashed value never equals a plain one, so a map that is injective on its plain
 * values stays injective (up to SHA-256 collisions) once hashing is added.
 */
export function labelValue(plain: string | undefined, full: string): string {
  if (plain !== undefined && isLabelValue(plain) && !isHashedValue(plain)) return plain;
  return `h-${base32(createHash('sha256').update(full, 'utf8').digest()).slice(0, HASH_CHARS)}`;
}

/** RFC 4648 base32, lower case, without padding. */
function base32(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += BASE32[(buffer >>> bits) & 31];
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32[(buffer << (5 - bits)) & 31];
  return out;
}
