import type { KubeObject } from '../object/index.ts';
import type { ObjectReference } from './event-types.ts';

/** Kubernetes' limit on `note` / `message` (NoteLengthLimit), in UTF-8 bytes. */
export const NOTE_LIMIT_BYTES = 1024;
/** Kubernetes' limit on `reason`, `action` and `reportingInstance` (128 characters). */
export const FIELD_LIMIT = 128;
/** The longest object name Kubernetes accepts (a DNS subdomain). */
const NAME_LIMIT = 253;

const encoder = new TextEncoder();

/**
 * Cuts `text` to at most `maxBytes` UTF-8 bytes without splitting a character.
 *
 * @example
 * truncateUtf8('héllo', 2); // 'h' ('é' takes two bytes and would not fit whole)
 */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes) return text;
  const bytes = encoder.encode(text);
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  // Step back over continuation bytes (10xxxxxx) to the start of the character that did not fit.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return new TextDecoder().decode(bytes.subarray(0, end));
}

/** Cuts `text` to at most `max` UTF-16 code units without splitting a surrogate pair. */
export function truncateChars(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/**
 * Epoch milliseconds as a Kubernetes `MicroTime`: RFC 3339, UTC, six fractional digits.
 *
 * @example
 * microTime(1_700_000_000_123); // '2023-11-14T22:13:20.123000Z'
 */
export function microTime(epochMs: number): string {
  return `${new Date(Math.floor(epochMs)).toISOString().slice(0, -1)}000Z`;
}

/**
 * Epoch milliseconds as a Kubernetes `Time`: RFC 3339, UTC, whole seconds.
 *
 * @example
 * secondsTime(1_700_000_000_123); // '2023-11-14T22:13:20Z'
 */
export function secondsTime(epochMs: number): string {
  return `${new Date(Math.floor(epochMs)).toISOString().slice(0, 19)}Z`;
}

/**
 * The reference Events carry to `object`: apiVersion, kind, namespace, name, uid and
 * resourceVersion, each only when set.
 *
 * @example
 * objectReference(deployment); // { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web', uid: '…', resourceVersion: '42' }
 */
export function objectReference(object: KubeObject): ObjectReference {
  const meta = object.metadata;
  const ref: { -readonly [K in keyof ObjectReference]: ObjectReference[K] } = {};
  if (nonEmpty(object.apiVersion)) ref.apiVersion = object.apiVersion;
  if (nonEmpty(object.kind)) ref.kind = object.kind;
  if (nonEmpty(meta.namespace)) ref.namespace = meta.namespace;
  if (nonEmpty(meta.name)) ref.name = meta.name;
  if (nonEmpty(meta.uid)) ref.uid = meta.uid;
  if (nonEmpty(meta.resourceVersion)) ref.resourceVersion = meta.resourceVersion;
  return ref;
}

/**
 * The identity of a referenced object for aggregation and rate limiting: everything but the
 * resourceVersion, which changes with every write and would split a series.
 */
export function referenceIdentity(ref: ObjectReference | undefined): string {
  if (ref === undefined) return '';
  return JSON.stringify([
    ref.apiVersion ?? '',
    ref.kind ?? '',
    ref.namespace ?? '',
    ref.name ?? '',
    ref.uid ?? '',
  ]);
}

/**
 * The name of a new Event about `regardingName`: `<name>.<suffix>`, the name cut so the whole fits
 * in 253 characters, with a leading or trailing dot or dash trimmed from the cut part.
 */
export function eventName(regardingName: string, suffix: string): string {
  const room = NAME_LIMIT - suffix.length - 1;
  const base =
    regardingName.length <= room ? regardingName : regardingName.slice(0, room).replace(/[-.]+$/, '');
  return `${base}.${suffix}`;
}

/**
 * A unique suffix like client-go's (`%x` of the time): the time in hex plus six random hex digits,
 * so two recorders writing in the same millisecond rarely collide (a collision is retried).
 */
export function uniqueSuffix(epochMs: number, random: () => number): string {
  const noise = Math.floor(random() * 0x1000000)
    .toString(16)
    .padStart(6, '0');
  return `${Math.max(0, Math.floor(epochMs)).toString(16)}${noise}`;
}

function nonEmpty(value: string | undefined): value is string {
  return typeof value === 'string' && value !== '';
}
