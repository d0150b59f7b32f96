import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import {
  type Cause,
  type CauseWriter,
  type ClientInterceptor,
  type ClientRequestInfo,
  type ClientWriteBody,
  MAX_CHAIN_LINKS,
  type ObjectEvent,
  type ReconcileInfo,
} from '@converge/runtime';
import type { SpanContext } from '@opentelemetry/api';
import {
  chainLinks,
  formatWrittenBy,
  parseWrittenBy,
  remoteWriterOf,
  spanContextOf,
  traceparentOf,
  WRITTEN_BY_ANNOTATION,
  type WrittenBy,
} from './written-by.ts';

/** The reconcile running now, as the writes it makes name it. */
interface Writing {
  readonly info: ReconcileInfo;
  readonly span: SpanContext | undefined;
  /** Its stamp, made on its first write that needs a new one. */
  stamp?: string;
  /** The content of each write it sends (by object), until the write returns. */
  readonly sending: Map<string, string | undefined>;
}

/** What this process last stored in an object: its stamp, at which version, and what else it sent. */
interface Stored {
  /** The stamp the object held after the write, if any. */
  readonly value: WrittenBy | undefined;
  readonly raw: string | undefined;
  readonly uid: string | undefined;
  readonly resourceVersion: string | undefined;
  /** A digest of what the write sent, but the stamp and what the server sets (see `contentOf`). */
  readonly content: string | undefined;
}

/** Objects whose last stamp is remembered (for patches, which do not carry the object's). */
const MAX_STORED = 10_000;
/** Annotation values whose remote writer is kept, so that equal values give one writer. */
const MAX_PARSED = 1_000;

/**
 * `Tracing({ propagate: true })`: the writes of a traced reconcile carry
 * {@link WRITTEN_BY_ANNOTATION}, and the events whose object another process stamped name that
 * writer (a `RemoteWriters` lookup). @internal
 *
 * The stability rule (a no-op write must stay a no-op): a write keeps the stamp the object holds
 * when that stamp names the same controller and key as the writing reconcile and the write sends
 * the same content as the last write this process made to the object (or this process made none).
 * The stamp the object holds is the one in the object sent (create, update, status update, an
 * apply or merge patch that has one), else the one this process last stored in that object, unless
 * an event of the run shows a version of it this process did not store. Otherwise the write names
 * the writing reconcile: it changes the object anyway.
 */
export class Propagation {
  readonly processId: string;
  readonly #running = new AsyncLocalStorage<Writing>();
  readonly #stored = new Map<string, Stored>();
  readonly #parsed = new Map<string, CauseWriter | null>();
  readonly #spans = new WeakMap<CauseWriter, SpanContext>();

  constructor(processId: string) {
    this.processId = processId;
  }

  /** Runs a reconcile's `run` as the writer its writes name. */
  run<T>(info: ReconcileInfo, span: SpanContext | undefined, run: () => T): T {
    return this.#running.run({ info, span, sending: new Map() }, run);
  }

  /** The span context of the reconcile that wrote a remote writer's write, if it carried one. */
  remoteSpanOf(writer: CauseWriter | undefined): SpanContext | undefined {
    return writer === undefined ? undefined : this.#spans.get(writer);
  }

  /** The client interceptor: stamps writes made inside a traced reconcile, remembers what was stored. */
  readonly interceptor: ClientInterceptor & Required<Pick<ClientInterceptor, 'prepareWrite'>> = {
    aroundRequest: (info, run) => this.#aroundRequest(info, run),
    prepareWrite: (info, body) => this.#prepareWrite(info, body),
  };

  /**
   * The `RemoteWriters` lookup: the writer an event's object names, when another process stamped
   * it in this version (an update whose old object held the same stamp was not written by it).
   */
  readonly lookup = (event: ObjectEvent<unknown>): CauseWriter | undefined => {
    const raw = annotationOf(event.object);
    if (raw === undefined) return undefined;
    if (event.type === 'update' && annotationOf(event.oldObject) === raw) return undefined;
    if (event.type !== 'update' && event.type !== 'create') return undefined;
    const known = this.#parsed.get(raw);
    if (known !== undefined) return known ?? undefined;
    const written = parseWrittenBy(raw);
    const writer =
      written === undefined || written.process === this.processId ? null : remoteWriterOf(written);
    if (writer !== null) {
      const span = spanContextOf(written?.traceparent);
      if (span !== undefined) this.#spans.set(writer, span);
    }
    if (this.#parsed.size >= MAX_PARSED) this.#parsed.delete(this.#parsed.keys().next().value as string);
    this.#parsed.set(raw, writer);
    return writer ?? undefined;
  };

  #prepareWrite(info: ClientRequestInfo, body: ClientWriteBody): ClientWriteBody {
    const writing = this.#running.getStore();
    if (writing === undefined) return body;
    if ('object' in body) {
      const held = annotationOf(body.object);
      const stamp = this.#stampFor(writing, info, held, contentOf(body.object, info.subresource));
      return held === stamp ? body : { object: withAnnotation(body.object, stamp) };
    }
    const patch = body.patch;
    if (patch.type === 'json') return body; // an `add` needs the annotations map to exist
    const config = patch.patch;
    if (typeof config !== 'object' || config === null || Array.isArray(config)) return body;
    const metadata = (config as { metadata?: unknown }).metadata;
    if (metadata !== undefined && (typeof metadata !== 'object' || metadata === null)) return body;
    const annotations = (metadata as { annotations?: unknown } | undefined)?.annotations;
    // `annotations: null` removes them all: leave such a patch as it is.
    if (annotations !== undefined && (typeof annotations !== 'object' || annotations === null)) return body;
    const held = annotationOf(config);
    const stamp = this.#stampFor(writing, info, held, contentOf(config, undefined));
    if (held === stamp) return body;
    return { patch: { ...patch, patch: withAnnotation(config, stamp) } };
  }

  /** The stamp a write of the running reconcile sends (see the class's rule). */
  #stampFor(
    writing: Writing,
    info: ClientRequestInfo,
    held: string | undefined,
    content: string | undefined,
  ): string {
    const { controller, key } = writing.info;
    const id = objectId(info);
    writing.sending.set(id, content);
    const stored = this.#stored.get(id);
    const same = stored === undefined || (content !== undefined && stored.content === content);
    const sent = held === undefined ? undefined : parseWrittenBy(held);
    if (sent !== undefined && sent.controller === controller && sent.key === key && same)
      return held as string;
    if (held === undefined && stored?.raw !== undefined && same) {
      const value = stored.value as WrittenBy;
      if (
        value.controller === controller &&
        value.key === key &&
        !changedSince(stored, writing.info.causes.causes)
      )
        return stored.raw;
    }
    writing.stamp ??= this.#stamp(writing);
    return writing.stamp;
  }

  #stamp(writing: Writing): string {
    const { info, span } = writing;
    const { via, chain } = chainLinks(info.controller, info.key, info.causes.causes, MAX_CHAIN_LINKS - 1);
    const traceparent = traceparentOf(span);
    return formatWrittenBy({
      process: this.processId,
      controller: info.controller,
      key: info.key,
      reconcileId: info.reconcileId,
      ...(via === undefined ? {} : { via }),
      ...(traceparent === undefined ? {} : { traceparent }),
      chain,
    });
  }

  #aroundRequest(info: ClientRequestInfo, run: () => Promise<unknown>): Promise<unknown> {
    const promise = run();
    const writing = this.#running.getStore();
    if (writing === undefined || info.dryRun === true) return promise;
    if (info.verb !== 'create' && info.verb !== 'update' && info.verb !== 'patch') return promise;
    return promise.then((stored) => this.#remember(info, stored, writing));
  }

  /** Remembers the stamp an object holds as stored by a write of this process, and what it sent. */
  #remember(info: ClientRequestInfo, object: unknown, writing: Writing): void {
    const metadata = (object as { metadata?: Record<string, unknown> } | null)?.metadata;
    if (typeof metadata !== 'object' || metadata === null) return;
    const name = typeof metadata.name === 'string' ? metadata.name : info.name;
    if (name === undefined) return;
    const id = objectId({ ...info, name });
    const raw = annotationOf(object);
    const value = raw === undefined ? undefined : parseWrittenBy(raw);
    this.#stored.delete(id);
    if (this.#stored.size >= MAX_STORED) this.#stored.delete(this.#stored.keys().next().value as string);
    this.#stored.set(id, {
      value,
      raw: value === undefined ? undefined : raw,
      uid: typeof metadata.uid === 'string' ? metadata.uid : undefined,
      resourceVersion: typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : undefined,
      content: writing.sending.get(objectId(info)),
    });
  }
}

/** Whether an event of the run shows a version of the object other than the one stored. */
function changedSince(stored: Stored, causes: readonly Cause[]): boolean {
  if (stored.uid === undefined) return false;
  for (const c of causes) {
    const o = c.object;
    if (
      o?.uid === stored.uid &&
      o.resourceVersion !== undefined &&
      o.resourceVersion !== stored.resourceVersion
    )
      return true;
  }
  return false;
}

function objectId(info: {
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
}): string {
  const resource = info.subresource === undefined ? info.resource : `${info.resource}/${info.subresource}`;
  return `${info.group}/${resource}|${info.namespace ?? ''}/${info.name ?? ''}`;
}

/** Metadata the server sets, left out of a write's content. */
const SERVER_SET = new Set(['resourceVersion', 'managedFields', 'generation', 'uid', 'creationTimestamp']);

/**
 * A digest of what a write sends (an object, or a merge patch's or apply configuration's object),
 * without the stamp and the metadata the server sets; for a status write, its status only, and for
 * another write of an object, everything but its status. Undefined when it cannot be serialized.
 */
function contentOf(body: unknown, subresource: string | undefined): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { metadata, status, ...rest } = body as { metadata?: unknown; status?: unknown };
  let content: unknown;
  if (subresource === 'status') content = status ?? null;
  else {
    const meta: Record<string, unknown> = {};
    if (typeof metadata === 'object' && metadata !== null) {
      for (const [k, v] of Object.entries(metadata)) if (!SERVER_SET.has(k)) meta[k] = v;
      const annotations = meta.annotations;
      if (typeof annotations === 'object' && annotations !== null && WRITTEN_BY_ANNOTATION in annotations) {
        const { [WRITTEN_BY_ANNOTATION]: _, ...others } = annotations as Record<string, unknown>;
        // An object that held only the stamp is the same content as one without annotations.
        if (Object.keys(others).length === 0) delete meta.annotations;
        else meta.annotations = others;
      }
    }
    content = { ...rest, metadata: meta };
  }
  try {
    return createHash('sha256').update(JSON.stringify(content)).digest('base64');
  } catch {
    return undefined;
  }
}

/** The annotation an object (or a patch's object) holds, if a string. */
function annotationOf(object: unknown): string | undefined {
  if (typeof object !== 'object' || object === null) return undefined;
  const metadata = (object as { metadata?: unknown }).metadata;
  if (typeof metadata !== 'object' || metadata === null) return undefined;
  const annotations = (metadata as { annotations?: unknown }).annotations;
  if (typeof annotations !== 'object' || annotations === null) return undefined;
  const value = (annotations as Record<string, unknown>)[WRITTEN_BY_ANNOTATION];
  return typeof value === 'string' ? value : undefined;
}

/** A copy of `object` with the annotation set (the object given is not changed). */
function withAnnotation<T>(object: T, value: string): T {
  const o = object as { metadata?: { annotations?: Record<string, string> } };
  const metadata = o.metadata ?? {};
  return {
    ...object,
    metadata: {
      ...metadata,
      annotations: { ...(metadata.annotations ?? {}), [WRITTEN_BY_ANNOTATION]: value },
    },
  };
}
