import { OptionsError } from '../errors.ts';
import type { ObjectEvent } from '../event/index.ts';
import type { CauseWriter } from '../workqueue/index.ts';

/**
 * Names the reconcile of another process that wrote the object of `event`, from what the object
 * carries (an annotation, say); undefined when it names none, or names one of this process (whose
 * writes its `WriteLedger` names). Called once per event that enqueues a key; must not throw.
 */
export type RemoteWriterLookup = (event: ObjectEvent<unknown>) => CauseWriter | undefined;

/**
 * Where the sources of a manager ask who, in another process, wrote the object of an event: the
 * cross-process half of cause chains. The runtime knows no format: a lookup installed with
 * {@link RemoteWriters.use} reads it (`@converge/tracing` installs one with `propagate: true`).
 * A source built with `fromEventSource({ remoteWriters })` (the builder's are) gives the causes of
 * an `added` (not from an initial list) or `modified` event the writer the lookup returns as
 * `writtenBy`, marked `remote`; a controller's `WriteLedger` leaves such causes alone.
 *
 * Empty, it costs a field read per event. A manager has one (`manager.remoteWriters`).
 *
 * @example
 * const remoteWriters = new RemoteWriters();
 * const source = fromEventSource({ eventSource: informer, handler, remoteWriters });
 * remoteWriters.use((event) => writerFromAnnotation(event.object));
 */
export class RemoteWriters {
  #lookups: readonly RemoteWriterLookup[] = [];

  /** Whether a lookup is installed. */
  get active(): boolean {
    return this.#lookups.length > 0;
  }

  /** Installs a lookup (asked after those installed before); returns a function that removes it. */
  use(lookup: RemoteWriterLookup): () => void {
    if (typeof lookup !== 'function')
      throw new OptionsError('lookup', lookup, 'a function (event) => CauseWriter | undefined');
    this.#lookups = [...this.#lookups, lookup];
    return () => {
      this.#lookups = this.#lookups.filter((l) => l !== lookup);
    };
  }

  /**
   * {@link RemoteWriters.writerOf} for events that can echo a write, live creates and updates
   * (not initial lists, resyncs, deletes or generic events); undefined for others, and at once
   * while no lookup is installed. What sources call.
   */
  echoWriterOf(event: ObjectEvent<unknown>): CauseWriter | undefined {
    if (this.#lookups.length === 0) return undefined;
    if (
      event.type === 'create'
        ? event.isInInitialList === true
        : event.type !== 'update' || event.isResync === true
    )
      return undefined;
    return this.writerOf(event);
  }

  /**
   * The remote writer of the event's object: the first lookup's answer that is a writer, marked
   * `remote`. Lookups that throw or answer something else are passed over.
   */
  writerOf(event: ObjectEvent<unknown>): CauseWriter | undefined {
    for (const lookup of this.#lookups) {
      let writer: unknown;
      try {
        writer = lookup(event);
      } catch {
        continue;
      }
      if (isWriter(writer))
        return writer.remote === true ? writer : Object.freeze({ ...writer, remote: true });
    }
    return undefined;
  }
}

function isWriter(value: unknown): value is CauseWriter {
  if (typeof value !== 'object' || value === null) return false;
  const w = value as Record<string, unknown>;
  return (
    typeof w.controller === 'string' &&
    typeof w.key === 'string' &&
    typeof w.reconcileId === 'string' &&
    Array.isArray(w.causes)
  );
}
