import { OptionsError } from '@converge/runtime';
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { isValidLeaseKey } from '../lease-key/index.ts';

/** The bucket {@link KvLeaseLock.open} uses when none is named. */
export const DEFAULT_LEASE_BUCKET = 'converge-leases';

/**
 * How many revisions of each lease the bucket {@link KvLeaseLock.open} creates keeps. More than
 * one, so `nats kv history <bucket> <key>` shows the last few renewals and handovers when you
 * debug an election; the lock itself only reads the latest.
 */
export const DEFAULT_LEASE_HISTORY = 10;

/** Names the lease: either `key`, or `namespace` and `name` (stored under `<namespace>.<name>`). */
export interface KvLeaseName {
  /**
   * The KV key of the lease: letters, digits and `-/_=.`, not starting or ending with `.`, no
   * empty `.`-separated token, not starting with `_kv` (reserved by NATS).
   */
  readonly key?: string;
  /**
   * A Kubernetes-style namespace (a DNS label: lower-case letters, digits, `-`), with `name`.
   * The key is `<namespace>.<name>`; since a namespace has no `.`, distinct pairs get distinct
   * keys, and `{ namespace: 'default', name: 'op' }` is the same lease as `{ key: 'default.op' }`.
   */
  readonly namespace?: string;
  /** The lease name within `namespace`; any string that is itself a valid key. */
  readonly name?: string;
  /** Who this replica is; unique among the replicas. */
  readonly identity: string;
}

/** A lock over a KV handle the caller opened. */
export interface KvLeaseLockKvOptions extends KvLeaseName {
  /** An `@nats-io/kv` handle on the lease bucket. */
  readonly kv: KV;
  /** The bucket's name for `describe()` and errors. Default: the handle's own (`@nats-io/kv` handles carry it). */
  readonly bucket?: string;
  readonly connection?: never;
}

/** A lock that opens (and by default creates) its bucket over a connection. */
export interface KvLeaseLockConnectionOptions extends KvLeaseName {
  readonly connection: NatsConnection;
  /** The bucket. Default {@link DEFAULT_LEASE_BUCKET} (`converge-leases`). */
  readonly bucket?: string;
  /** Create the bucket if it does not exist. Default true. */
  readonly createBucket?: boolean;
  /** Revisions kept per key when the bucket is created (1..64). Default {@link DEFAULT_LEASE_HISTORY}. */
  readonly history?: number;
  /** Replicas of the bucket's stream when it is created (1..5; 3 on a cluster). Default 1. */
  readonly replicas?: number;
  readonly kv?: never;
}

/** Options of {@link KvLeaseLock.open}. */
export type KvLeaseLockOptions = KvLeaseLockKvOptions | KvLeaseLockConnectionOptions;

/** A lease's key and the identity writing it. @internal */
export interface ResolvedName {
  readonly key: string;
  readonly identity: string;
}

const BUCKET = /^[-\w]+$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Validates the naming options (throws {@link OptionsError}) and resolves the key.
 *
 * @internal
 */
export function resolveName(options: unknown): ResolvedName {
  if (typeof options !== 'object' || options === null)
    throw new OptionsError('options', options, 'an object');
  const { key, namespace, name, identity } = options as Record<string, unknown>;
  if (typeof identity !== 'string' || identity === '') {
    throw new OptionsError('identity', identity, 'a non-empty string');
  }
  const expectedKey = 'a KV key (letters, digits, -/_=. ; no leading, trailing or double dot; not _kv…)';
  if (key !== undefined) {
    if (namespace !== undefined || name !== undefined) {
      throw new OptionsError('key', key, 'either key, or namespace and name, not both');
    }
    if (!isValidLeaseKey(key)) throw new OptionsError('key', key, expectedKey);
    return { key, identity };
  }
  if (namespace === undefined && name === undefined) {
    throw new OptionsError('key', key, 'a key, or namespace and name');
  }
  if (typeof namespace !== 'string' || namespace.length > 63 || !DNS_LABEL.test(namespace)) {
    throw new OptionsError(
      'namespace',
      namespace,
      'a DNS label (lower-case letters, digits and -, at most 63)',
    );
  }
  if (!isValidLeaseKey(name)) throw new OptionsError('name', name, expectedKey);
  return { key: `${namespace}.${name}`, identity };
}

/**
 * A valid bucket name, or an {@link OptionsError}.
 *
 * @internal
 */
export function bucketName(value: unknown): string {
  if (typeof value !== 'string' || !BUCKET.test(value)) {
    throw new OptionsError('bucket', value, 'a KV bucket name (letters, digits, - and _)');
  }
  return value;
}

/**
 * An integer in [min, max], or `fallback` if undefined; else an {@link OptionsError}.
 *
 * @internal
 */
export function boundedInteger(
  field: string,
  value: unknown,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new OptionsError(field, value, `an integer from ${min} to ${max}`);
  }
  return value;
}
