import {
  AbortedError,
  ConflictError,
  type LeaderLock,
  type LeaderRecord,
  OptionsError,
  type VersionedRecord,
} from '@converge/runtime';
import { type KV, Kvm } from '@nats-io/kv';
import { decodeKvLease, encodeKvLease, type KvLeaseDocument } from './document.ts';
import { fromNatsError, type KvLeaseOperation } from './errors.ts';
import {
  boundedInteger,
  bucketName,
  DEFAULT_LEASE_BUCKET,
  DEFAULT_LEASE_HISTORY,
  type KvLeaseLockConnectionOptions,
  type KvLeaseLockKvOptions,
  type KvLeaseLockOptions,
  resolveName,
} from './options.ts';

/** The entry last read or written, so an update keeps fields of the document it replaces. */
interface Last {
  readonly revision: number;
  readonly document: KvLeaseDocument | undefined;
}

/**
 * A {@link LeaderLock} on one key of a NATS JetStream KV bucket, for leader election with NATS
 * alone. It needs no per-key TTL (nats-server 2.9 has none): like a Kubernetes Lease, the entry
 * holds the holder, lease duration, acquire and renew times and the transitions count (a
 * {@link KvLeaseDocument}), and electors judge expiry by watching it not change. The entry's KV
 * revision is the record's version, as a decimal string: `create` writes only if the key has no
 * live value (`kv.create`), `update` only if the key's last revision is still the one read
 * (`kv.update`), so of two racing writers exactly one wins.
 *
 * - `get` resolves to undefined when the key was never written or its last operation is a delete
 *   or purge (`nats kv del`): the next elector creates it afresh.
 * - An entry that is not a lease document rejects `get` with a {@link KvLeaseInvalidError}; the
 *   lock never overwrites it (see there).
 * - NATS errors become backend errors with the NATS error as `cause`: a wrong last sequence is a
 *   ConflictError (AlreadyExistsError on create); timeouts, a closed connection, no responders
 *   or JetStream unavailable are an UnavailableError (retryable).
 * - Every call honours its signal: an aborted signal rejects at once with an AbortedError and
 *   sends nothing; an abort while a call is in flight rejects it at once, though a write already
 *   sent may still be applied (as a lost response would be; the elector re-reads).
 * - Reads go to the stream leader (no direct get), so a read never shows an older revision than
 *   one this process saw acknowledged.
 *
 * @example
 * import { connect } from '@nats-io/transport-node';
 *
 * const connection = await connect({ servers: 'nats://127.0.0.1:4222', maxReconnectAttempts: -1 });
 * const lock = await KvLeaseLock.open({ connection, namespace: 'default', name: 'my-operator', identity: hostname() });
 * const manager = new Manager({ backend, leaderElection: new LeaderElector({ lock }) });
 */
export class KvLeaseLock implements LeaderLock {
  readonly identity: string;
  /** The bucket's name. */
  readonly bucket: string;
  /** The lease's key in the bucket. */
  readonly key: string;
  readonly #kv: KV;
  #last: Last | undefined;

  /**
   * A lock over a KV handle you opened (`await new Kvm(connection).open('converge-leases')`).
   * Use {@link KvLeaseLock.open} to open or create the bucket from a connection.
   */
  constructor(options: KvLeaseLockKvOptions) {
    const { key, identity } = resolveName(options);
    if (options.connection !== undefined) {
      throw new OptionsError('connection', 'a connection', 'absent: KvLeaseLock.open takes a connection');
    }
    const kv = options.kv as Partial<KV> | undefined;
    if (
      typeof kv !== 'object' ||
      kv === null ||
      typeof kv.get !== 'function' ||
      typeof kv.create !== 'function' ||
      typeof kv.update !== 'function'
    ) {
      throw new OptionsError('kv', kv, 'a KV handle from @nats-io/kv (get, create, update)');
    }
    this.#kv = kv as KV;
    this.bucket = bucketName(options.bucket ?? (kv as { bucket?: unknown }).bucket);
    this.key = key;
    this.identity = identity;
  }

  /**
   * Opens a lock: over `kv` as the constructor does, or over `connection`, opening the bucket
   * (default `converge-leases`) and creating it if it does not exist (unless `createBucket` is
   * false, when a missing bucket rejects with a NotFoundError). A bucket that exists is used as
   * it is. Invalid options reject with an OptionsError; NATS errors as the lock's calls do.
   *
   * @example
   * const lock = await KvLeaseLock.open({ connection, key: 'billing-operator', identity: process.env.POD_NAME ?? hostname() });
   */
  static async open(options: KvLeaseLockOptions, signal?: AbortSignal): Promise<KvLeaseLock> {
    if (typeof options === 'object' && options !== null && options.kv !== undefined) {
      return new KvLeaseLock(options as KvLeaseLockKvOptions);
    }
    const o = options as KvLeaseLockConnectionOptions;
    const { key } = resolveName(o);
    const connection = o.connection as Partial<KvLeaseLockConnectionOptions['connection']> | undefined;
    if (typeof connection !== 'object' || connection === null || typeof connection.request !== 'function') {
      throw new OptionsError('connection', connection, 'a NatsConnection (or pass kv)');
    }
    const bucket = bucketName(o.bucket ?? DEFAULT_LEASE_BUCKET);
    const createBucket = o.createBucket ?? true;
    if (typeof createBucket !== 'boolean') throw new OptionsError('createBucket', createBucket, 'a boolean');
    const history = boundedInteger('history', o.history, DEFAULT_LEASE_HISTORY, 1, 64);
    const replicas = boundedInteger('replicas', o.replicas, 1, 1, 5);
    const kvm = new Kvm(o.connection);
    const kv = await call('open', { bucket, key }, signal ?? new AbortController().signal, async () => {
      if (createBucket) return await kvm.create(bucket, { history, replicas, allow_direct: false });
      const opened = await kvm.open(bucket, { allow_direct: false });
      await opened.status(); // binding sends nothing: ask, so a missing bucket fails here
      return opened;
    });
    return new KvLeaseLock({ kv, bucket, key, identity: o.identity });
  }

  /** `nats:<bucket>/<key>`. */
  describe(): string {
    return `nats:${this.bucket}/${this.key}`;
  }

  async get(signal: AbortSignal): Promise<VersionedRecord | undefined> {
    const entry = await this.#call('get', signal, () => this.#kv.get(this.key));
    if (entry === null || entry.operation !== 'PUT') {
      this.#last = undefined;
      return undefined;
    }
    const where = { bucket: this.bucket, key: this.key, revision: entry.revision };
    const { document, record } = decodeKvLease(entry.value, where);
    this.#last = { revision: entry.revision, document };
    return { record, version: String(entry.revision) };
  }

  async create(record: LeaderRecord, signal: AbortSignal): Promise<string> {
    const value = encodeKvLease(record);
    const revision = await this.#call('create', signal, () => this.#kv.create(this.key, value));
    this.#last = { revision, document: undefined };
    return String(revision);
  }

  async update(record: LeaderRecord, version: string, signal: AbortSignal): Promise<string> {
    const expected = parseRevision(version);
    if (expected === undefined) {
      throw new ConflictError(
        `leader lease ${this.describe()}: version ${JSON.stringify(version)} is not a revision this lock wrote or read`,
      );
    }
    const base = this.#last?.revision === expected ? this.#last.document : undefined;
    const value = encodeKvLease(record, base);
    const revision = await this.#call('update', signal, () => this.#kv.update(this.key, value, expected));
    this.#last = { revision, document: base };
    return String(revision);
  }

  #call<T>(op: KvLeaseOperation, signal: AbortSignal, run: () => Promise<T>): Promise<T> {
    return call(op, { bucket: this.bucket, key: this.key }, signal, run);
  }
}

/** A KV revision as the decimal string the lock hands out, or undefined. */
function parseRevision(version: string): number | undefined {
  if (typeof version !== 'string' || !/^[1-9]\d*$/.test(version)) return undefined;
  const revision = Number(version);
  return Number.isSafeInteger(revision) ? revision : undefined;
}

/**
 * Runs one NATS call under `signal`: rejects at once without calling if it already aborted, and
 * as soon as it aborts while the call is in flight (the NATS client takes no signal, so the call
 * itself is left to finish or time out; its outcome is ignored). NATS errors are mapped by
 * {@link fromNatsError}.
 */
async function call<T>(
  op: KvLeaseOperation,
  where: { readonly bucket: string; readonly key: string },
  signal: AbortSignal,
  run: () => Promise<T>,
): Promise<T> {
  const abortedError = (): AbortedError =>
    new AbortedError(`${op} nats:${where.bucket}/${where.key} aborted`, { cause: signal.reason });
  if (signal.aborted) throw abortedError();
  let onAbort = (): void => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(abortedError());
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    // race subscribes to both, so neither a late NATS rejection nor a late abort goes unhandled.
    return await Promise.race([Promise.resolve().then(run), aborted]);
  } catch (error) {
    throw fromNatsError(error, op, where);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
