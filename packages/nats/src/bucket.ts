import {
  BackendError,
  ConflictError,
  type Fence,
  FencedError,
  InternalError,
  type ResourceType,
  TimeoutError,
  UnavailableError,
} from '@converge/runtime';
import {
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type StoredMsg,
  type StreamInfo,
} from '@nats-io/jetstream';
import { headers, errors as natsErrors } from '@nats-io/nats-core';
import {
  BUCKET_MARKER_KEY,
  CONVERGE_OPERATION,
  type DecodedEntry,
  decodeEntry,
  decodeObjectKey,
  encodeObject,
  entryHeaders,
  KV_OPERATION,
  type RawEntry,
} from './codec.ts';
import { compareFence, decodeMark, encodeMark, FENCED_ATTEMPTS, fenceKey } from './fence.ts';
import { isValidKvKey } from './keys.ts';
import { convergeCodec, type KvCodec, type KvCodecContext } from './kv-codec.ts';

/** What a bucket's stream holds right now. */
export interface StreamState {
  /** The first retained revision (`last + 1` when the stream is empty). */
  readonly first: number;
  /** The last revision ever written (it survives purges). */
  readonly last: number;
  /** Messages retained. */
  readonly messages: number;
  /** When the stream was created (ISO time): a deleted and recreated bucket has a new one. */
  readonly created: string;
}

function toState(info: StreamInfo): StreamState {
  const { first_seq: first, last_seq: last, messages } = info.state;
  return { first, last, messages, created: info.created };
}

/** How a put or marker is published. */
export interface PublishRequest {
  readonly operation: 'PUT' | 'DEL' | 'PURGE';
  /** Marks the put of a create (the watch reports it as ADDED). */
  readonly create?: boolean;
  /** The key's current revision, 0 when it never existed: the write fails if it moved on. */
  readonly expected: number;
  /** The ownership the write is made for: refused with a FencedError once a higher epoch was announced (see fence.ts). */
  readonly fence?: Fence | undefined;
}

/**
 * Turns a failure of the NATS client into a backend error: a closed or unreachable connection is
 * an {@link UnavailableError}, a request timeout a {@link TimeoutError}, anything else an
 * {@link InternalError}; backend errors pass through.
 */
export function natsFailure(error: unknown, what: string): BackendError {
  if (error instanceof BackendError) return error;
  const message = `nats: ${what} failed: ${(error as Error)?.message ?? String(error)}`;
  if (error instanceof natsErrors.TimeoutError) return new TimeoutError(message, { cause: error });
  if (
    error instanceof natsErrors.ClosedConnectionError ||
    error instanceof natsErrors.ConnectionError ||
    error instanceof natsErrors.NoRespondersError ||
    error instanceof natsErrors.DrainingConnectionError ||
    error instanceof natsErrors.RequestError
  ) {
    return new UnavailableError(message, { cause: error });
  }
  return new InternalError(message, { cause: error });
}

/** Whether a publish failed its `expected last subject sequence` precondition. */
function isWrongLastSequence(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.StreamWrongLastSequence ||
      error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

/** The stream and subjects of one type's KV bucket, and the few requests every operation needs. */
export class TypeBucket {
  readonly type: ResourceType;
  /** The bucket name. */
  readonly name: string;
  /** The JetStream stream behind it (`KV_<name>`). */
  readonly stream: string;
  /** How objects map to this bucket's keys and values. */
  readonly codec: KvCodec;
  readonly #context: KvCodecContext;
  readonly #prefix: string;
  readonly #js: JetStreamClient;
  readonly #jsm: JetStreamManager;
  /** Fenced writes of this process to this bucket, one at a time (they would only send each other round). */
  #fencedQueue: Promise<unknown> = Promise.resolve();
  /**
   * The fence last seen current here and the stream's last revision then: a fenced write with the
   * same fence may commit on condition of that revision without reading again (if the stream moved
   * since, the condition fails and the write reads again).
   */
  #verified: { readonly fence: Fence; readonly last: number } | undefined;

  constructor(
    js: JetStreamClient,
    jsm: JetStreamManager,
    type: ResourceType,
    name: string,
    codec: KvCodec = convergeCodec,
  ) {
    this.#js = js;
    this.#jsm = jsm;
    this.type = type;
    this.name = name;
    this.codec = codec;
    this.#context = Object.freeze({ type, bucket: name });
    this.stream = `KV_${name}`;
    this.#prefix = `$KV.${name}.`;
  }

  /**
   * The KV key of `namespace/name` under this bucket's codec, or undefined when the codec cannot
   * hold that pair: it throws, returns an invalid KV key, or one that does not decode back to it.
   */
  key(namespace: string, name: string): string | undefined {
    let key: unknown;
    try {
      key = this.codec.encodeKey({ namespace, name }, this.#context);
    } catch {
      return undefined;
    }
    if (typeof key !== 'string' || !isValidKvKey(key)) return undefined;
    if (this.codec === convergeCodec) return key;
    const back = decodeObjectKey(this.codec, this.#context, key);
    return back?.namespace === namespace && back.name === name ? key : undefined;
  }

  /** The stored bytes of an object (an InvalidError when the codec cannot store it). */
  encode(object: object): Uint8Array {
    return encodeObject(object, this.#context, this.codec);
  }

  /** The subject of a key. */
  subject(key: string): string {
    return this.#prefix + key;
  }

  /** The subject filter of every key (`namespace` undefined) or of one namespace's keys. */
  filter(namespace?: string): string {
    if (namespace === undefined) return `${this.#prefix}>`;
    let filter: unknown;
    try {
      filter = this.codec.namespaceFilter?.(namespace, this.#context);
    } catch {
      filter = undefined;
    }
    return typeof filter === 'string' && /^[-/_=.a-zA-Z0-9*>]+$/.test(filter)
      ? `${this.#prefix}${filter}`
      : `${this.#prefix}>`;
  }

  /** A consumed message as a raw entry. */
  fromMessage(message: JsMsg): RawEntry {
    const h = message.headers;
    return {
      key: message.subject.slice(this.#prefix.length),
      seq: message.seq,
      data: message.data,
      ...entryHeaders((name) => h?.get(name) ?? ''),
    };
  }

  #fromStored(message: StoredMsg): RawEntry {
    const h = message.header;
    return {
      key: message.subject.slice(this.#prefix.length),
      seq: message.seq,
      data: message.data,
      ...entryHeaders((name) => h?.get(name) ?? ''),
    };
  }

  /** Decodes a raw entry of this bucket. */
  decode(entry: RawEntry): DecodedEntry {
    return decodeEntry(this.name, this.type, entry, this.codec);
  }

  /** The latest entry of `key` (a live object, a delete marker, garbage), or undefined if it has none. */
  async current(key: string): Promise<DecodedEntry | undefined> {
    let stored: StoredMsg | null;
    try {
      stored = await this.#jsm.streams.getMessage(this.stream, { last_by_subj: this.subject(key) });
    } catch (error) {
      throw natsFailure(error, `get of ${this.name}/${key}`);
    }
    return stored === null ? undefined : this.decode(this.#fromStored(stored));
  }

  /** The entry at revision `seq`, if it is still retained and belongs to `key`. */
  async at(key: string, seq: number): Promise<DecodedEntry | undefined> {
    let stored: StoredMsg | null;
    try {
      stored = await this.#jsm.streams.getMessage(this.stream, { seq });
    } catch (error) {
      throw natsFailure(error, `get of ${this.name} revision ${seq}`);
    }
    if (stored === null || stored.subject !== this.subject(key)) return undefined;
    return this.decode(this.#fromStored(stored));
  }

  /**
   * Publishes a put or delete marker on `key` if its revision is still `request.expected`. Returns
   * the new revision, or undefined when the key moved on (the optimistic-concurrency failure). A
   * write with a `fence` is refused with a {@link FencedError} once this bucket holds a higher mark
   * of its name (see fence.ts); it raises a lower one.
   */
  async publish(key: string, data: Uint8Array, request: PublishRequest): Promise<number | undefined> {
    const fence = request.fence;
    if (fence === undefined) return await this.#publish(key, data, request, undefined);
    const run = this.#fencedQueue.then(() => this.#publishFenced(key, data, request, fence));
    this.#fencedQueue = run.catch(() => undefined);
    return await run;
  }

  async #publishFenced(
    key: string,
    data: Uint8Array,
    request: PublishRequest,
    fence: Fence,
  ): Promise<number | undefined> {
    for (let attempt = 1; attempt <= FENCED_ATTEMPTS; attempt++) {
      const verified = this.#verified;
      // After a write of this process with the same fence, nothing need be read: the mark was
      // current at that write's revision, and the condition fails if anything came after it.
      const last =
        verified !== undefined && sameFence(verified.fence, fence)
          ? verified.last
          : await this.#fenced(fence);
      const seq = await this.#publish(key, data, request, last);
      if (seq !== undefined) {
        this.#verified = { fence, last: seq };
        return seq;
      }
      this.#verified = undefined;
      // The key moved (the caller's conflict), or only the stream did: another key was written
      // since `last`, or a mark was raised (the next round meets it).
      const current = await this.current(key);
      if ((current?.entry.seq ?? 0) !== request.expected) return undefined;
    }
    throw new ConflictError(
      `nats: write of ${this.name}/${key} for fence "${fence.name}" gave up: the bucket's stream moved under it ${FENCED_ATTEMPTS} times`,
    );
  }

  /**
   * Checks `fence` against this bucket's mark, raising a lower one; returns the stream's last
   * revision at which the mark was seen (the condition of the write that follows).
   */
  async #fenced(fence: Fence): Promise<number> {
    for (let attempt = 1; attempt <= FENCED_ATTEMPTS; attempt++) {
      const { last } = await this.state();
      const { mark, seq } = await this.markOf(fence.name);
      const verdict = compareFence(fence, mark);
      if (verdict === 'stale') throw FencedError.stale(fence, mark as Fence);
      if (verdict === 'current') return last;
      const raised = await this.#publish(
        fenceKey(fence.name),
        encodeMark(fence),
        { operation: 'PUT', expected: seq },
        last,
      );
      if (raised !== undefined) return raised;
    }
    throw new ConflictError(
      `nats: the fence mark of "${fence.name}" in ${this.name} could not be read still: the bucket's stream moved ${FENCED_ATTEMPTS} times`,
    );
  }

  /** The mark of fence `name` in this bucket and its revision (0 when it has none). */
  async markOf(name: string): Promise<{ readonly mark: Fence | undefined; readonly seq: number }> {
    const entry = await this.current(fenceKey(name));
    if (entry === undefined) return { mark: undefined, seq: 0 };
    return { mark: decodeMark(entry.entry, name), seq: entry.entry.seq };
  }

  /**
   * Raises this bucket's mark of `fence.name` to `fence` (an announcement: a holder took it, or a
   * member was revoked); returns the mark. A higher mark, or the same epoch from another holder,
   * is a {@link FencedError}.
   */
  async announce(fence: Fence): Promise<Fence> {
    for (let attempt = 1; attempt <= FENCED_ATTEMPTS; attempt++) {
      const { mark, seq } = await this.markOf(fence.name);
      const verdict = compareFence(fence, mark);
      if (verdict === 'stale') throw FencedError.stale(fence, mark as Fence);
      if (verdict === 'current') return mark as Fence;
      const raised = await this.#publish(
        fenceKey(fence.name),
        encodeMark(fence),
        { operation: 'PUT', expected: seq },
        undefined,
      );
      if (raised !== undefined) return { name: fence.name, holder: fence.holder, epoch: fence.epoch };
    }
    throw new ConflictError(
      `nats: the fence mark of "${fence.name}" in ${this.name} changed too often to raise it`,
    );
  }

  /** Refuses a stale `fence` without raising anything (a dry run's check). */
  async checkFence(fence: Fence): Promise<void> {
    const { mark } = await this.markOf(fence.name);
    if (compareFence(fence, mark) === 'stale') throw FencedError.stale(fence, mark as Fence);
  }

  /** One conditional publish: on the key's revision, and on the stream's last revision when `last` is set. */
  async #publish(
    key: string,
    data: Uint8Array,
    request: PublishRequest,
    last: number | undefined,
  ): Promise<number | undefined> {
    const h = headers();
    if (request.operation !== 'PUT') h.set(KV_OPERATION, request.operation);
    if (request.operation === 'PURGE') h.set('Nats-Rollup', 'sub');
    if (request.create === true) h.set(CONVERGE_OPERATION, 'CREATE');
    try {
      const ack = await this.#js.publish(this.subject(key), data, {
        headers: h,
        expect:
          last === undefined
            ? { lastSubjectSequence: request.expected }
            : { lastSubjectSequence: request.expected, lastSequence: last },
      });
      return ack.seq;
    } catch (error) {
      if (isWrongLastSequence(error)) return undefined;
      throw natsFailure(error, `write of ${this.name}/${key}`);
    }
  }

  /**
   * Writes the {@link BUCKET_MARKER_KEY} entry if the stream has never held a message, so its
   * revisions start at 1 (a list's resourceVersion is never '0').
   */
  async markIfEmpty(): Promise<void> {
    if ((await this.state()).last > 0) return;
    const body = new TextEncoder().encode(
      JSON.stringify({
        bucketOf: { group: this.type.group, version: this.type.version, kind: this.type.kind },
      }),
    );
    await this.publish(BUCKET_MARKER_KEY, body, { operation: 'PUT', expected: 0 });
  }

  /** The stream's first and last revision. */
  async state(): Promise<StreamState> {
    try {
      return toState(await this.#jsm.streams.info(this.stream));
    } catch (error) {
      throw natsFailure(error, `stream info of ${this.name}`);
    }
  }

  /** The stream's state, or undefined when the stream does not exist (the bucket was deleted). */
  async stateIfExists(): Promise<StreamState | undefined> {
    try {
      return toState(await this.#jsm.streams.info(this.stream));
    } catch (error) {
      if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound)
        return undefined;
      throw natsFailure(error, `stream info of ${this.name}`);
    }
  }

  /** Removes the revisions of `key` below `seq` (all of them when `seq` is past the last). */
  async purgeBelow(key: string, seq: number): Promise<number> {
    try {
      const response = await this.#jsm.streams.purge(this.stream, { filter: this.subject(key), seq });
      return response.purged;
    } catch (error) {
      throw natsFailure(error, `purge of ${this.name}/${key}`);
    }
  }
}

function sameFence(a: Fence, b: Fence): boolean {
  return a === b || (a.name === b.name && a.holder === b.holder && a.epoch === b.epoch);
}
