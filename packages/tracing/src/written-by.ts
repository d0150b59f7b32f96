import { type Cause, type CauseWriter, followedEcho, MAX_CHAIN_LINKS } from '@converge/runtime';
import { isSpanContextValid, type SpanContext, TraceFlags } from '@opentelemetry/api';

/**
 * The annotation `Tracing({ propagate: true })` writes on the objects a traced reconcile writes:
 * who wrote it, in which process, under which trace, and the writers before it (a few links).
 */
export const WRITTEN_BY_ANNOTATION = 'converge.dev/written-by';

/** One reconcile named by the annotation. */
export interface WrittenByLink {
  readonly controller: string;
  readonly key: string;
  readonly reconcileId: string;
  /** The type of the event by which this reconcile ran because of the next link's write. */
  readonly via?: 'added' | 'modified' | 'deleted';
}

/**
 * The annotation's value, parsed: `{"v":1,"process":…,"controller":…,"key":…,"reconcileId":…,
 * "traceparent":…,"via":…,"chain":[{"controller":…,"key":…,"reconcileId":…,"via":…}]}` (JSON;
 * `traceparent`, `via` and `chain` optional; `chain` at most `MAX_CHAIN_LINKS - 1` links).
 */
export interface WrittenBy extends WrittenByLink {
  /** Who stamped it: the `processId` of the `Tracing` (a process reads only others' stamps). */
  readonly process: string;
  /** The W3C `traceparent` of the writing reconcile's span, when it had a valid one. */
  readonly traceparent?: string;
  /** The writers before it: the one whose write made it run, and so on. */
  readonly chain: readonly WrittenByLink[];
}

/** Longest value read; a longer one is ignored. */
const MAX_VALUE_LENGTH = 4096;
/** Longest name, key or id read. */
const MAX_FIELD_LENGTH = 1024;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const VIA = new Set(['added', 'modified', 'deleted']);

/** The annotation's value for `written` (JSON, fields in a fixed order so equal stamps are equal text). */
export function formatWrittenBy(written: WrittenBy): string {
  return JSON.stringify({
    v: 1,
    process: written.process,
    ...link(written),
    ...(written.traceparent === undefined ? {} : { traceparent: written.traceparent }),
    ...(written.chain.length === 0 ? {} : { chain: written.chain.map(link) }),
  });
}

function link(l: WrittenByLink): WrittenByLink {
  return {
    controller: l.controller,
    key: l.key,
    reconcileId: l.reconcileId,
    ...(l.via === undefined ? {} : { via: l.via }),
  };
}

/** The annotation's value parsed; undefined for anything malformed (never throws). */
export function parseWrittenBy(value: unknown): WrittenBy | undefined {
  if (typeof value !== 'string' || value.length > MAX_VALUE_LENGTH) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    return undefined;
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return undefined;
  const o = json as Record<string, unknown>;
  if (o.v !== 1 || !isField(o.process)) return undefined;
  const top = parseLink(o);
  if (top === undefined) return undefined;
  const tp = o.traceparent;
  if (tp !== undefined && spanContextOf(tp) === undefined) return undefined;
  const chain: WrittenByLink[] = [];
  if (o.chain !== undefined) {
    if (!Array.isArray(o.chain) || o.chain.length > MAX_CHAIN_LINKS - 1) return undefined;
    for (const item of o.chain as unknown[]) {
      const l =
        typeof item === 'object' && item !== null ? parseLink(item as Record<string, unknown>) : undefined;
      if (l === undefined) return undefined;
      chain.push(l);
    }
  }
  return Object.freeze({
    process: o.process as string,
    ...top,
    ...(tp === undefined ? {} : { traceparent: tp as string }),
    chain: Object.freeze(chain),
  });
}

function parseLink(o: Record<string, unknown>): WrittenByLink | undefined {
  const { controller, key, reconcileId, via } = o;
  if (!isField(controller) || !isField(key) || !isField(reconcileId)) return undefined;
  if (via !== undefined && !(typeof via === 'string' && VIA.has(via))) return undefined;
  return Object.freeze({
    controller,
    key,
    reconcileId,
    ...(via === undefined ? {} : { via: via as NonNullable<WrittenByLink['via']> }),
  });
}

function isField(value: unknown): value is string {
  return typeof value === 'string' && value !== '' && value.length <= MAX_FIELD_LENGTH;
}

/** The W3C `traceparent` of a valid span context, else undefined. */
export function traceparentOf(context: SpanContext | undefined): string | undefined {
  if (context === undefined || !isSpanContextValid(context)) return undefined;
  const flags = (context.traceFlags & 0xff).toString(16).padStart(2, '0');
  return `00-${context.traceId}-${context.spanId}-${flags}`;
}

/** The remote span context of a W3C `traceparent` (version 00, ids not all zero), else undefined. */
export function spanContextOf(traceparent: unknown): SpanContext | undefined {
  if (typeof traceparent !== 'string') return undefined;
  const m = TRACEPARENT.exec(traceparent);
  if (m === null) return undefined;
  const context: SpanContext = {
    traceId: m[1] as string,
    spanId: m[2] as string,
    traceFlags: Number.parseInt(m[3] as string, 16) & TraceFlags.SAMPLED,
    isRemote: true,
  };
  return isSpanContextValid(context) ? context : undefined;
}

/**
 * The chain behind a reconcile of `controller` and `key` with `causes`, as the annotation names it:
 * one path, at most `links` writers. At each link it follows the newest cause that echoes a write
 * of another controller or key (what made the loop go round, for a reader in another process),
 * else the newest echo.
 */
export function chainLinks(
  controller: string,
  key: string,
  causes: readonly Cause[],
  links: number,
): { via?: WrittenByLink['via']; chain: WrittenByLink[] } {
  const chain: WrittenByLink[] = [];
  let echo = followedEcho(causes, controller, key);
  const via = viaOf(echo);
  while (echo !== undefined && chain.length < links) {
    const w = echo.writtenBy as CauseWriter;
    echo = followedEcho(w.causes, w.controller, w.key);
    const next = viaOf(echo);
    chain.push({
      controller: w.controller,
      key: w.key,
      reconcileId: w.reconcileId,
      ...(next === undefined ? {} : { via: next }),
    });
  }
  return { ...(via === undefined ? {} : { via }), chain };
}

function viaOf(cause: Cause | undefined): WrittenByLink['via'] {
  const type = cause?.type;
  return type === 'added' || type === 'modified' || type === 'deleted' ? type : undefined;
}

/**
 * The remote writer a parsed annotation names: each link a `CauseWriter` marked `remote`, whose
 * one cause (of its `via` type, default `modified`, without an object) was written by the next.
 */
export function remoteWriterOf(written: WrittenBy): CauseWriter {
  const links: WrittenByLink[] = [written, ...written.chain];
  let below: CauseWriter | undefined;
  for (let i = links.length - 1; i >= 0; i--) {
    const l = links[i] as WrittenByLink;
    const causes: readonly Cause[] =
      below === undefined ? [] : [Object.freeze({ type: l.via ?? 'modified', writtenBy: below })];
    below = Object.freeze({
      controller: l.controller,
      key: l.key,
      reconcileId: l.reconcileId,
      causes: Object.freeze(causes),
      remote: true,
    });
  }
  return below as CauseWriter;
}
