import {
  type Clock,
  type Logger,
  noopLogger,
  OptionsError,
  type ResourceType,
  realClock,
} from '@converge/runtime';
import type { NatsConnection } from '@nats-io/nats-core';
import { BUCKET_NAME } from './keys.ts';
import type { KvCodec } from './kv-codec.ts';

/** How the backend removes a key: a `DEL` marker (history kept) or a `PURGE` marker (history dropped). */
export type DeleteMode = 'delete' | 'purge';

/**
 * Options of {@link NatsBackend.connect}. Give either `servers` (the backend opens and closes its
 * own connection) or `connection` (yours; the backend never closes it).
 *
 * @example
 * const options: NatsBackendOptions = {
 *   servers: 'nats://127.0.0.1:4222',
 *   types: [widgets],
 *   bucketPrefix: 'myapp_',
 *   history: 16,
 * };
 */
export interface NatsBackendOptions {
  /** Server URL(s) to connect to. The connection reconnects forever until {@link NatsBackend.close}. */
  readonly servers?: string | readonly string[];
  /** An open connection to use instead of `servers`. */
  readonly connection?: NatsConnection;
  /** Types to serve from the start (more with `registerType`). Missing buckets are created. */
  readonly types?: readonly ResourceType[];
  /** Prefix of every default bucket name, `[-_A-Za-z0-9]*`. Default `converge_`. */
  readonly bucketPrefix?: string;
  /** The bucket of a type; return undefined for the default (`<prefix><group>_<version>_<plural>`). */
  readonly bucketFor?: (type: ResourceType) => string | undefined;
  /**
   * The {@link KvCodec} of a type's bucket: how keys map to namespace and name and values to
   * objects. Return undefined for the default, {@link convergeCodec} (`<namespace>.<name>` keys,
   * escaped; the object's JSON as value). Use it to serve buckets another program wrote, such as
   * those of Kumori's Go controllers (with `bucketFor` naming their bucket).
   */
  readonly codecFor?: (type: ResourceType) => KvCodec | undefined;
  /** Replicas of buckets this backend creates (1–5). Default 1. */
  readonly replicas?: number;
  /**
   * Revisions kept per key in buckets this backend creates (1–64). Default 16. A watch from a
   * resourceVersion expires (410) once a key changed more often than this since that revision.
   */
  readonly history?: number;
  /** Delete with a `DEL` marker (default) or a `PURGE` marker that also drops the key's history. */
  readonly deleteMode?: DeleteMode;
  /** How long the snapshot behind a continue token is kept. Default 300 000 (5 minutes). */
  readonly continueTtlMs?: number;
  /** At most this many paginated-list snapshots are held; the oldest is dropped first. Default 32. */
  readonly maxContinueSnapshots?: number;
  /** Watches that allow bookmarks get one after this much time without one. Default 60 000. */
  readonly bookmarkIntervalMs?: number;
  /**
   * The idle heartbeat of a watch's ordered consumer (500–15 000): the server sends one whenever it
   * has had nothing to deliver for this long. After two missed heartbeats (the consumer was deleted,
   * the server hangs) the client checks the consumer and recreates it from the last delivered
   * revision, so such a watch resumes within about three heartbeats of the fault ending, without
   * gaps or duplicates. Default 5000.
   */
  readonly heartbeatMs?: number;
  /**
   * How often a running watch checks its bucket's stream (one stream-info request) for a purge, a
   * deletion or a recreation, which the revisions it receives do not show. Such a watch ends with
   * an ExpiredError (410), so informers relist. A lost, missing or recreated consumer triggers a
   * check at once. Default 30 000.
   */
  readonly streamCheckIntervalMs?: number;
  /** Run a garbage-collection pass after this backend's own deletes. Default true. */
  readonly garbageCollection?: boolean;
  readonly clock?: Clock;
  readonly logger?: Logger;
}

/** {@link NatsBackendOptions} checked, with the defaults filled in. */
export interface ResolvedOptions {
  readonly servers: readonly string[] | undefined;
  readonly connection: NatsConnection | undefined;
  readonly types: readonly ResourceType[];
  readonly bucketPrefix: string;
  readonly bucketFor: (type: ResourceType) => string | undefined;
  readonly codecFor: (type: ResourceType) => KvCodec | undefined;
  readonly replicas: number;
  readonly history: number;
  readonly deleteMode: DeleteMode;
  readonly continueTtlMs: number;
  readonly maxContinueSnapshots: number;
  readonly bookmarkIntervalMs: number;
  readonly heartbeatMs: number;
  readonly streamCheckIntervalMs: number;
  readonly garbageCollection: boolean;
  readonly clock: Clock;
  readonly logger: Logger;
}

function integer(field: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new OptionsError(field, value, `an integer from ${min} to ${max}`);
  }
  return value;
}

function servers(value: unknown): readonly string[] | undefined {
  if (value === undefined) return undefined;
  const list = typeof value === 'string' ? [value] : value;
  if (
    !Array.isArray(list) ||
    list.length === 0 ||
    list.some((s: unknown) => typeof s !== 'string' || s === '')
  ) {
    throw new OptionsError('servers', value, 'a server URL or a non-empty array of server URLs');
  }
  return Object.freeze([...(list as string[])]);
}

/** Checks the options once and fills in the defaults; throws an {@link OptionsError} naming the field. */
export function resolveOptions(options: NatsBackendOptions): ResolvedOptions {
  if (typeof options !== 'object' || options === null) {
    throw new OptionsError('options', options, 'a NatsBackendOptions object');
  }
  const list = servers(options.servers);
  const connection = options.connection;
  if (connection !== undefined && (typeof connection !== 'object' || connection === null)) {
    throw new OptionsError('connection', connection, 'a NatsConnection');
  }
  if ((list === undefined) === (connection === undefined)) {
    throw new OptionsError('servers', options.servers, 'exactly one of servers and connection');
  }
  const types = options.types ?? [];
  if (!Array.isArray(types)) throw new OptionsError('types', types, 'an array of resource types');
  const bucketPrefix = options.bucketPrefix ?? 'converge_';
  if (typeof bucketPrefix !== 'string' || (bucketPrefix !== '' && !BUCKET_NAME.test(bucketPrefix))) {
    throw new OptionsError('bucketPrefix', bucketPrefix, 'a string of [-_A-Za-z0-9]');
  }
  const bucketFor = options.bucketFor ?? (() => undefined);
  if (typeof bucketFor !== 'function') throw new OptionsError('bucketFor', bucketFor, 'a function');
  const codecFor = options.codecFor ?? (() => undefined);
  if (typeof codecFor !== 'function') throw new OptionsError('codecFor', codecFor, 'a function');
  const deleteMode = options.deleteMode ?? 'delete';
  if (deleteMode !== 'delete' && deleteMode !== 'purge') {
    throw new OptionsError('deleteMode', deleteMode, "'delete' or 'purge'");
  }
  const garbageCollection = options.garbageCollection ?? true;
  if (typeof garbageCollection !== 'boolean') {
    throw new OptionsError('garbageCollection', garbageCollection, 'a boolean');
  }
  const clock = options.clock ?? realClock;
  if (typeof clock?.now !== 'function' || typeof clock.setTimer !== 'function') {
    throw new OptionsError('clock', clock, 'a Clock');
  }
  const logger = options.logger ?? noopLogger;
  if (typeof logger?.warn !== 'function') throw new OptionsError('logger', logger, 'a Logger');
  return {
    servers: list,
    connection,
    types,
    bucketPrefix,
    bucketFor,
    codecFor,
    replicas: integer('replicas', options.replicas, 1, 1, 5),
    history: integer('history', options.history, 16, 1, 64),
    deleteMode,
    continueTtlMs: integer('continueTtlMs', options.continueTtlMs, 300_000, 1, 2 ** 31 - 1),
    maxContinueSnapshots: integer('maxContinueSnapshots', options.maxContinueSnapshots, 32, 1, 100_000),
    bookmarkIntervalMs: integer('bookmarkIntervalMs', options.bookmarkIntervalMs, 60_000, 1, 2 ** 31 - 1),
    heartbeatMs: integer('heartbeatMs', options.heartbeatMs, 5000, 500, 15_000),
    streamCheckIntervalMs: integer(
      'streamCheckIntervalMs',
      options.streamCheckIntervalMs,
      30_000,
      1,
      2 ** 31 - 1,
    ),
    garbageCollection,
    clock,
    logger,
  };
}
