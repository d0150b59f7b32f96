/**
 * What happened to an object, as seen by a source. Controllers turn events into keys; the
 * reconciler never sees them (level-based).
 */
export type ObjectEvent<T> =
  | { readonly type: 'create'; readonly object: T; readonly isInInitialList?: boolean }
  | { readonly type: 'update'; readonly oldObject: T; readonly object: T; readonly isResync?: boolean }
  | {
      readonly type: 'delete';
      /** The last known state; when `finalStateUnknown`, the state before the missed delete. */
      readonly object: T;
      /** True when the delete was missed (for example during a relist) and the object is a tombstone. */
      readonly finalStateUnknown?: boolean;
      /**
       * True when the backend removed the object's history with it (a NATS KV purge, as opposed
       * to a delete that leaves a marker and keeps the history).
       */
      readonly purged?: boolean;
    }
  | { readonly type: 'generic'; readonly object: T };

export type ObjectEventType = ObjectEvent<unknown>['type'];

/** The object an event is about (the new one for updates). */
export function eventObject<T>(event: ObjectEvent<T>): T {
  return event.object;
}

/** A stream of object events that listeners subscribe to (an informer, a poller, a channel). */
export interface EventSource<T> {
  /** A name for logs and for the causes of the keys its events enqueue. */
  readonly name?: string;
  /** Registers a listener; returns a function that removes it. */
  subscribe(listener: (event: ObjectEvent<T>) => void): () => void;
  /** Runs the source until `signal` aborts. Sources that need no running may resolve at once. */
  start?(signal: AbortSignal): Promise<void>;
  /** Resolves once the initial state has been delivered to listeners. */
  waitForSync?(signal: AbortSignal): Promise<void>;
  /** True once the initial state has been delivered. */
  hasSynced?(): boolean;
}
