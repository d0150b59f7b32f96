import {
  AbortedError,
  AlreadyExistsError,
  ConflictError,
  checkMemberRecord,
  type Logger,
  type MemberRecord,
  type Membership,
  NotFoundError,
  noopLogger,
  OptionsError,
  ShardRecordInvalidError,
  type VersionedMemberRecord,
} from '@converge/runtime';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { type KV, Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { encodeKey, encodeToken } from '../keys.ts';
import { fromNatsError } from '../lease/errors.ts';

/** The bucket {@link KvMembership.open} uses when none is named. */
export const DEFAULT_MEMBERSHIP_BUCKET = 'converge-shards';

/** `apiVersion` and `kind` of the JSON document under a member's key. */
export const KV_MEMBER_API_VERSION = 'converge.dev/v1';
export const KV_MEMBER_KIND = 'ShardMember';

export interface KvMembershipOptions {
  /** A KV handle (opened without direct gets, so reads see every acknowledged write). */
  readonly kv: KV;
  /** The shard group. */
  readonly group: string;
  /** Where documents that do not parse are reported. */
  readonly logger?: Logger;
}

export interface KvMembershipOpenOptions {
  readonly connection: NatsConnection;
  readonly group: string;
  /** Default {@link DEFAULT_MEMBERSHIP_BUCKET}; created if missing. */
  readonly bucket?: string;
  /** Revisions kept per key. Default 4 (`nats kv history` shows the last renewals). */
  readonly history?: number;
  readonly replicas?: number;
  readonly logger?: Logger;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * A {@link Membership} in a NATS JetStream KV bucket: one key per member, `<group>.<identity>`
 * (each part escaped as the backend escapes keys), holding a JSON document
 * `{ apiVersion: 'converge.dev/v1', kind: 'ShardMember', spec: <MemberRecord> }`. The key's KV
 * revision is the record's version: `create` writes only if the key has no live value, `update`
 * and `delete` only if its last revision is still the one named. It needs no per-key TTL
 * (nats-server 2.9 has none): members judge liveness by watching revisions change, and survivors
 * purge the keys of members gone for good (`delete` is a purge, which drops the key's history).
 *
 * @example
 * const membership = await KvMembership.open({ connection, group: 'widgets' });
 * const member = new ShardMember({ membership, identity: process.env.POD_NAME ?? hostname() });
 */
export class KvMembership implements Membership {
  readonly group: string;
  readonly bucket: string;
  readonly #kv: KV;
  readonly #logger: Logger;

  constructor(options: KvMembershipOptions) {
    if (typeof options !== 'object' || options === null)
      throw new OptionsError('options', options, 'an object');
    const kv = options.kv as Partial<KV> | undefined;
    if (
      typeof kv !== 'object' ||
      kv === null ||
      typeof kv.keys !== 'function' ||
      typeof kv.update !== 'function'
    ) {
      throw new OptionsError('kv', kv, 'a KV handle from @nats-io/kv');
    }
    if (typeof options.group !== 'string' || options.group === '') {
      throw new OptionsError('group', options.group, 'a non-empty string');
    }
    this.#kv = kv as KV;
    this.group = options.group;
    this.bucket = String((kv as { bucket?: unknown }).bucket ?? '');
    this.#logger = options.logger ?? noopLogger;
  }

  /** Opens (creating if missing) the bucket on `connection` and returns the group's membership. */
  static async open(options: KvMembershipOpenOptions): Promise<KvMembership> {
    const bucket = options.bucket ?? DEFAULT_MEMBERSHIP_BUCKET;
    const kv = await new Kvm(options.connection).create(bucket, {
      history: options.history ?? 4,
      replicas: options.replicas ?? 1,
      allow_direct: false,
    });
    return new KvMembership({
      kv,
      group: options.group,
      ...(options.logger ? { logger: options.logger } : {}),
    });
  }

  describe(): string {
    return `nats:${this.bucket}/${encodeToken(this.group)}.*`;
  }

  async list(signal: AbortSignal): Promise<readonly VersionedMemberRecord[]> {
    return await this.#call('get', '*', signal, async () => {
      const keys: string[] = [];
      for await (const key of await this.#kv.keys(`${encodeToken(this.group)}.*`)) keys.push(key);
      const out: VersionedMemberRecord[] = [];
      for (const key of keys.sort()) {
        const entry = await this.#kv.get(key);
        if (entry === null || entry.operation !== 'PUT') continue;
        try {
          const record = decode(entry.value, `nats:${this.bucket}/${key}`);
          if (encodeKey(this.group, record.identity) !== key) continue;
          out.push({ record, version: String(entry.revision) });
        } catch (error) {
          if (!(error instanceof ShardRecordInvalidError)) throw error;
          this.#logger.warn({ err: error, key }, 'Skipped an invalid membership record');
        }
      }
      return out;
    });
  }

  async create(record: MemberRecord, signal: AbortSignal): Promise<string> {
    const key = encodeKey(this.group, record.identity);
    return await this.#call('create', key, signal, async () => {
      try {
        return String(await this.#kv.create(key, encode(record)));
      } catch (error) {
        if (wrongLastSequence(error)) {
          throw new AlreadyExistsError(`member ${record.identity} of ${this.group} already exists`, {
            cause: error,
          });
        }
        throw error;
      }
    });
  }

  async update(record: MemberRecord, version: string, signal: AbortSignal): Promise<string> {
    const key = encodeKey(this.group, record.identity);
    return await this.#call('update', key, signal, async () => {
      try {
        return String(await this.#kv.update(key, encode(record), revision(version)));
      } catch (error) {
        if (!wrongLastSequence(error)) throw error;
        const current = await this.#kv.get(key);
        if (current === null || current.operation !== 'PUT') {
          throw new NotFoundError(`member ${record.identity} of ${this.group} not found`, { cause: error });
        }
        throw new ConflictError(
          `member ${record.identity} of ${this.group} changed since revision ${version}`,
          {
            cause: error,
          },
        );
      }
    });
  }

  async delete(identity: string, version: string, signal: AbortSignal): Promise<void> {
    const key = encodeKey(this.group, identity);
    await this.#call('update', key, signal, async () => {
      try {
        await this.#kv.purge(key, { previousSeq: revision(version) });
      } catch (error) {
        if (!wrongLastSequence(error)) throw error;
        const current = await this.#kv.get(key);
        if (current === null || current.operation !== 'PUT') return;
        throw new ConflictError(`member ${identity} of ${this.group} changed since revision ${version}`, {
          cause: error,
        });
      }
    });
  }

  /** Runs one NATS call under `signal`, mapping NATS errors to backend errors. */
  async #call<T>(
    op: 'get' | 'create' | 'update',
    key: string,
    signal: AbortSignal,
    run: () => Promise<T>,
  ): Promise<T> {
    const where = { bucket: this.bucket, key };
    const aborted = (): AbortedError =>
      new AbortedError(`${op} nats:${this.bucket}/${key} aborted`, { cause: signal.reason });
    if (signal.aborted) throw aborted();
    let onAbort = (): void => {};
    const abort = new Promise<never>((_, reject) => {
      onAbort = () => reject(aborted());
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([Promise.resolve().then(run), abort]);
    } catch (error) {
      throw fromNatsError(error, op, where);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }
}

function revision(version: string): number {
  const n = Number(version);
  if (!/^[1-9]\d*$/.test(version) || !Number.isSafeInteger(n)) {
    throw new ConflictError(`version ${JSON.stringify(version)} is not a KV revision`);
  }
  return n;
}

function wrongLastSequence(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.StreamWrongLastSequence ||
      error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

function encode(record: MemberRecord): Uint8Array {
  return encoder.encode(
    JSON.stringify({ apiVersion: KV_MEMBER_API_VERSION, kind: KV_MEMBER_KIND, spec: record }),
  );
}

function decode(value: Uint8Array, where: string): MemberRecord {
  let document: unknown;
  try {
    document = JSON.parse(decoder.decode(value));
  } catch (error) {
    throw new ShardRecordInvalidError(where, 'not JSON', { cause: error });
  }
  const d = document as { apiVersion?: unknown; kind?: unknown; spec?: unknown } | null;
  if (
    typeof d !== 'object' ||
    d === null ||
    d.apiVersion !== KV_MEMBER_API_VERSION ||
    d.kind !== KV_MEMBER_KIND
  ) {
    throw new ShardRecordInvalidError(where, `not a ${KV_MEMBER_API_VERSION} ${KV_MEMBER_KIND} document`);
  }
  return checkMemberRecord(d.spec, where);
}
