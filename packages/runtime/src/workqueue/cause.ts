import { OptionsError } from '../errors.ts';

/**
 * What made a key run, as a type:
 * - `added`, `modified`, `deleted`, `generic`: an event about an object (for a NATS KV primary, a
 *   put is `added` or `modified`, a delete `deleted` and a purge `deleted` with `purged`);
 * - `resync`: a periodic resync replayed the object unchanged;
 * - `requeue-after`: the reconciler returned `requeueAfter(ms)`;
 * - `requeue`: it returned `requeue()` or `requeueNow()`;
 * - `retry`: it failed and is retried (with backoff);
 * - `manual`: an add that named no cause (`controller.queue.add(key)`, a channel send, a custom source).
 */
export type CauseType =
  | 'added'
  | 'modified'
  | 'deleted'
  | 'generic'
  | 'resync'
  | 'requeue-after'
  | 'requeue'
  | 'retry'
  | 'manual';

/** The object an event was about: a reference by identity, never the object itself. */
export interface CauseObject {
  readonly kind?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  /** Its `metadata.generation`, for kinds that track one (hot-loop detection compares it). */
  readonly generation?: number;
}

/**
 * The reconcile whose write an event echoes: a write made through a client inside a reconcile is
 * remembered (a `WriteLedger`), and the event that brings it back names it. Its `causes` are that
 * reconcile's own, with their own `writtenBy`: a chain, shown {@link MAX_CHAIN_LINKS} links deep.
 */
export interface CauseWriter {
  readonly controller: string;
  readonly reconcileId: string;
  /** The key that reconcile reconciled (the controller's `keyOf`). */
  readonly key: string;
  readonly causes: readonly Cause[];
  /**
   * The reconcile ran in another process: the event's object named it (see `RemoteWriters`, which
   * `@converge/tracing` fills from the annotation its `propagate` option writes), not this
   * process's `WriteLedger`. Its `causes` are the links the object named, without objects.
   */
  readonly remote?: boolean;
}

/**
 * Links of `writtenBy` shown and followed (`formatCause`, `causeChain`, hot-loop detection). A
 * cause keeps at most 13 (a writer cuts its causes' chains back to two once they reach 12), so
 * memory stays bounded in a loop of writes.
 */
export const MAX_CHAIN_LINKS = 3;

/**
 * One reason a key was enqueued. Causes are plain frozen data: a type, the source that enqueued
 * the key, and for object events a reference to the object.
 */
export interface Cause {
  readonly type: CauseType;
  /** The name of the source that enqueued the key (an informer, a poller, a channel). */
  readonly source?: string;
  /** The object the event was about (for `secondary` causes, the secondary object). */
  readonly object?: CauseObject;
  /**
   * The key is not the event's object but one it points at: its owner, or what a map function
   * returned (Kumori's `Secondary`).
   */
  readonly secondary?: boolean;
  /** An `added` cause from a source's initial list (startup or relist), not a live create. */
  readonly initialList?: boolean;
  /** A `deleted` cause whose final state was missed (a tombstone from a relist or a poll). */
  readonly finalStateUnknown?: boolean;
  /** A `deleted` cause from a KV purge (the key's history removed too), not a plain delete. */
  readonly purged?: boolean;
  /**
   * The reconcile of this process whose write the event echoes (added, modified or deleted events
   * only), when the controller keeps cause chains (`causeChains`, default on); or, with
   * `RemoteWriters` in use, the reconcile of another process that the event's object names
   * (`remote: true`). Not compared by {@link sameCause}.
   */
  readonly writtenBy?: CauseWriter;
  /**
   * When the queue received it (clock milliseconds), if the queue times causes (see
   * `WorkQueue.timeCauses`; a controller with an interceptor does). Not compared by {@link sameCause}:
   * of equal causes the first one kept keeps its time.
   */
  readonly at?: number;
}

/** The causes of one run of a key: the most recent distinct ones kept, and how many were let go. */
export interface CauseSet {
  /** Oldest first; at most the queue's `maxCausesPerKey`. */
  readonly causes: readonly Cause[];
  /** Causes that arrived for this run but were not kept (the set was full: the oldest went). */
  readonly dropped: number;
}

/** The cause of adds that name none. */
export const manualCause: Cause = Object.freeze({ type: 'manual' });
/** The default cause of `requeueAfter`. */
export const requeueAfterCause: Cause = Object.freeze({ type: 'requeue-after' });
/** The default cause of `addRateLimited` and `requeueRateLimited`. */
export const retryCause: Cause = Object.freeze({ type: 'retry' });

/** The causes of a run that had none (a key not processing, or a queue that keeps none). */
export const noCauses: CauseSet = Object.freeze({ causes: Object.freeze([]), dropped: 0 });

/** Whether two causes say the same thing (same type, flags, source and object reference). */
export function sameCause(a: Cause, b: Cause): boolean {
  if (a === b) return true;
  if (
    a.type !== b.type ||
    a.source !== b.source ||
    a.secondary !== b.secondary ||
    a.initialList !== b.initialList ||
    a.finalStateUnknown !== b.finalStateUnknown ||
    a.purged !== b.purged
  ) {
    return false;
  }
  const x = a.object;
  const y = b.object;
  if (x === y) return true;
  if (x === undefined || y === undefined) return false;
  return (
    x.kind === y.kind &&
    x.namespace === y.namespace &&
    x.name === y.name &&
    x.uid === y.uid &&
    x.resourceVersion === y.resourceVersion
  );
}

/** Several causes of one run, oldest first, and how many were let go. @internal */
export class CauseList {
  readonly items: Cause[];
  dropped: number;

  constructor(items: Cause[], dropped: number) {
    this.items = items;
    this.dropped = dropped;
  }
}

/**
 * How the queue stores the causes of one run: none, one (the common case: no allocation), or a
 * {@link CauseList}. @internal
 */
export type CauseSlot = Cause | CauseList | undefined;

/**
 * `slot` with `cause` added unless an equal one is there; past `max` the oldest is let go and
 * counted. May change a list slot in place. @internal
 */
export function addToSlot(slot: CauseSlot, cause: Cause, max: number): CauseSlot {
  if (slot === undefined) return cause;
  if (!(slot instanceof CauseList)) {
    if (sameCause(slot, cause)) return slot;
    return max > 1 ? new CauseList([slot, cause], 0) : new CauseList([cause], 1);
  }
  const items = slot.items;
  for (let i = 0; i < items.length; i++) if (sameCause(items[i] as Cause, cause)) return slot;
  if (items.length >= max) {
    items.shift();
    slot.dropped++;
  }
  items.push(cause);
  return slot;
}

/**
 * `first` followed by the causes of `then` (as by {@link addToSlot}) and its count of causes
 * let go. May change `first`, and return `then` itself. @internal
 */
export function joinSlots(first: CauseSlot, then: CauseSlot, max: number): CauseSlot {
  if (then === undefined) return first;
  if (first === undefined) return then;
  if (!(then instanceof CauseList)) return addToSlot(first, then, max);
  let slot: CauseSlot = first;
  for (const cause of then.items) slot = addToSlot(slot, cause, max);
  if (then.dropped === 0) return slot;
  const list = slot instanceof CauseList ? slot : new CauseList([slot as Cause], 0);
  list.dropped += then.dropped;
  return list;
}

/** The causes of a slot, as handed out: a frozen copy. @internal */
export function slotCauses(slot: CauseSlot): CauseSet {
  if (slot === undefined) return noCauses;
  if (!(slot instanceof CauseList)) return Object.freeze({ causes: Object.freeze([slot]), dropped: 0 });
  return Object.freeze({ causes: Object.freeze(slot.items.slice()), dropped: slot.dropped });
}

/** Checks a cause passed to the queue. @internal */
export function causeOption(value: Cause | undefined, field = 'cause'): Cause | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || typeof value.type !== 'string') {
    throw new OptionsError(field, value, 'a cause with a type');
  }
  return value;
}

/**
 * A short text of a cause for logs: `<type> [flags] <Kind> <namespace>/<name>@<resourceVersion>
 * via <source>`, each part only when known; for an echo of a write of this process, then
 * `, written by reconcile <id> of controller <name> (<key>), which ran because: <its causes>`
 * (`; `-separated, each formatted the same way, as deep as the chain was kept).
 *
 * @example
 * formatCause({ type: 'deleted', purged: true, source: 'widgets', object: { kind: 'Widget', namespace: 'ns', name: 'w', resourceVersion: '7' } });
 * // 'deleted purged Widget ns/w@7 via widgets'
 */
export function formatCause(cause: Cause): string {
  return formatLinks(cause, MAX_CHAIN_LINKS);
}

function formatLinks(cause: Cause, links: number): string {
  const w = cause.writtenBy;
  if (w === undefined || links <= 0) return formatOwnCause(cause);
  const because = w.causes.map((c) => formatLinks(c, links - 1)).join('; ');
  return `${formatOwnCause(cause)}, ${formatWriter(w)}${because === '' ? '' : `, which ran because: ${because}`}`;
}

/** `written by reconcile <id> of controller <name> (<key>)`, then ` in another process` for a remote one. */
export function formatWriter(writer: CauseWriter): string {
  const text = `written by reconcile ${writer.reconcileId} of controller ${writer.controller} (${writer.key})`;
  return writer.remote === true ? `${text} in another process` : text;
}

/** {@link formatCause} without the writer. @internal */
export function formatOwnCause(cause: Cause): string {
  let text: string = cause.type;
  if (cause.secondary === true) text += ' secondary';
  if (cause.initialList === true) text += ' initial-list';
  if (cause.finalStateUnknown === true) text += ' final-state-unknown';
  if (cause.purged === true) text += ' purged';
  const o = cause.object;
  if (o !== undefined) {
    if (o.kind !== undefined) text += ` ${o.kind}`;
    if (o.name !== undefined) text += ` ${o.namespace ? `${o.namespace}/` : ''}${o.name}`;
    if (o.resourceVersion !== undefined) text += `@${o.resourceVersion}`;
  }
  if (cause.source !== undefined) text += ` via ${cause.source}`;
  return text;
}
