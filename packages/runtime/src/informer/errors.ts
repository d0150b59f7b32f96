import { ConvergeError, type ConvergeErrorOptions } from '../errors.ts';

/** Stable codes of the informer's errors. Never reused. */
export const InformerErrorCodes = {
  /** A watch event or list item could not be used (no name, wrong kind, outside the scope); it was skipped. */
  MALFORMED_EVENT: 'CONVERGE_ERR_INFORMER_MALFORMED_EVENT',
  /** The transform function threw on an object (or broke it); the object was cached untransformed. */
  TRANSFORM_FAILED: 'CONVERGE_ERR_INFORMER_TRANSFORM_FAILED',
  /** A watch closed within a second without delivering an event; counted as an error (backoff). */
  SHORT_WATCH: 'CONVERGE_ERR_INFORMER_SHORT_WATCH',
  /** A watch event carried a resourceVersion older than one already seen; the informer relists. */
  RESOURCE_VERSION_REGRESSION: 'CONVERGE_ERR_INFORMER_RESOURCE_VERSION_REGRESSION',
  /** A watch expired before delivering any event (its start point was already too old); the relist backs off. */
  WATCH_EXPIRED_AT_START: 'CONVERGE_ERR_INFORMER_WATCH_EXPIRED_AT_START',
  /** An informer was acquired from a registry whose signal already aborted. */
  REGISTRY_STOPPED: 'CONVERGE_ERR_INFORMER_REGISTRY_STOPPED',
  /** The backend rejected or mishandled a `sendInitialEvents` watch; `auto` falls back to paginated lists. */
  WATCH_LIST_UNSUPPORTED: 'CONVERGE_ERR_INFORMER_WATCH_LIST_UNSUPPORTED',
  /** A `sendInitialEvents` watch ended before its initial-events-end bookmark; nothing was cached, retried after a backoff. */
  INITIAL_EVENTS_INCOMPLETE: 'CONVERGE_ERR_INFORMER_INITIAL_EVENTS_INCOMPLETE',
} as const;

/**
 * A watch event or list item the informer cannot use: the object is not an object, has no
 * `metadata.name`, is of another kind, or lies outside the informer's namespace. It is logged with
 * this error and skipped; the informer goes on.
 *
 * @example
 * logger.warn({ err: new MalformedEventError('pods', 'ADDED', 'no metadata.name') }, 'Skipped a malformed watch event');
 */
export class MalformedEventError extends ConvergeError {
  readonly informer: string;
  readonly eventType: string;
  readonly reason: string;
  constructor(informer: string, eventType: string, reason: string) {
    super(
      InformerErrorCodes.MALFORMED_EVENT,
      `informer ${informer}: skipped a ${eventType} event: ${reason}`,
    );
    this.informer = informer;
    this.eventType = eventType;
    this.reason = reason;
  }
}

/**
 * The informer's `transform` threw on an object, or returned something that is not a valid object
 * of the informer's kind. The object is cached as it came, untransformed, and this error is logged
 * with the failure as `cause`. Make transforms total.
 *
 * @example
 * new Informer({ backend, type, transform: (o) => ({ ...o, metadata: { ...o.metadata, annotations: {} } }) });
 */
export class TransformFailedError extends ConvergeError {
  readonly informer: string;
  constructor(informer: string, options?: ConvergeErrorOptions) {
    super(
      InformerErrorCodes.TRANSFORM_FAILED,
      `informer ${informer}: transform failed; object cached untransformed`,
      options,
    );
    this.informer = informer;
  }
}

/**
 * A watch ended within a second without a single event (client-go's "very short watch"). The
 * informer counts it as an error and backs off before watching again, so a backend that closes
 * watches at once cannot make it spin.
 *
 * @example
 * if (error instanceof ShortWatchError) metrics.shortWatches.inc();
 */
export class ShortWatchError extends ConvergeError {
  readonly durationMs: number;
  constructor(informer: string, durationMs: number) {
    super(
      InformerErrorCodes.SHORT_WATCH,
      `informer ${informer}: the watch closed after ${durationMs}ms without an event; backing off`,
    );
    this.durationMs = durationMs;
  }
}

/**
 * A watch event's resourceVersion was older than one the informer had already seen. The stream
 * cannot be trusted (a restored backend, a proxy replaying history), so the event is not applied
 * and the informer relists with a consistent read; the relist's diff tells listeners what changed.
 *
 * @example
 * logger.warn({ err: new ResourceVersionRegressionError('pods', '120', '95') }, 'Resource version went backwards; relisting');
 */
export class ResourceVersionRegressionError extends ConvergeError {
  readonly previous: string;
  readonly received: string;
  constructor(informer: string, previous: string, received: string) {
    super(
      InformerErrorCodes.RESOURCE_VERSION_REGRESSION,
      `informer ${informer}: resourceVersion went backwards from ${previous} to ${received}; relisting`,
    );
    this.previous = previous;
    this.received = received;
  }
}

/**
 * A watch expired (410) before it delivered any event: the resourceVersion it started from was
 * already too old. Relisting at once could loop (kube-rs #1748), so the relist backs off first.
 *
 * @example
 * if (error instanceof WatchExpiredAtStartError) console.warn('lists are slower than the history window');
 */
export class WatchExpiredAtStartError extends ConvergeError {
  constructor(informer: string, resourceVersion: string, options?: ConvergeErrorOptions) {
    super(
      InformerErrorCodes.WATCH_EXPIRED_AT_START,
      `informer ${informer}: the watch from ${resourceVersion} expired before any event; relisting after a backoff`,
      options,
    );
  }
}

/**
 * `acquire` was called on an {@link InformerRegistry} that has stopped: its informers would never run.
 *
 * @example
 * const registry = new InformerRegistry(); const stop = new AbortController();
 * void registry.start(stop.signal); stop.abort(); registry.acquire({ backend, type }); // throws
 */
export class RegistryStoppedError extends ConvergeError {
  constructor() {
    super(InformerErrorCodes.REGISTRY_STOPPED, 'informer registry: stopped; no informer can be acquired');
  }
}

/**
 * The backend cannot serve a streamed list (a watch with `sendInitialEvents`): it rejected the
 * watch (a BadRequest, Invalid or Unsupported error before any event, the error being the `cause`),
 * or it sent an event other than ADDED before the BOOKMARK that ends the initial events. With
 * `initialList: 'auto'` the informer logs this once and uses paginated lists from then on; with
 * `'watch-list'` it is an ordinary list error (backoff, retry). Nothing of the stream is cached.
 *
 * @example
 * new Informer({ backend, type, initialList: 'paginated' }); // for a backend without sendInitialEvents
 */
export class WatchListUnsupportedError extends ConvergeError {
  readonly informer: string;
  readonly reason: string;
  constructor(informer: string, reason: string, options?: ConvergeErrorOptions) {
    super(
      InformerErrorCodes.WATCH_LIST_UNSUPPORTED,
      `informer ${informer}: the backend cannot stream the initial list (sendInitialEvents): ${reason}`,
      options,
    );
    this.informer = informer;
    this.reason = reason;
  }
}

/**
 * A streamed list's watch ended (closed by the backend, a timeout) before the BOOKMARK that ends
 * its initial events. The objects received so far were dropped, not cached: the cache and listeners
 * only ever see complete lists. The informer backs off and streams the list again.
 *
 * @example
 * if (error instanceof InitialEventsIncompleteError) console.warn(`${error.received} initial events dropped`);
 */
export class InitialEventsIncompleteError extends ConvergeError {
  readonly informer: string;
  /** Initial events received before the watch ended. */
  readonly received: number;
  constructor(informer: string, received: number) {
    super(
      InformerErrorCodes.INITIAL_EVENTS_INCOMPLETE,
      `informer ${informer}: the watch ended after ${received} initial events, before the initial-events-end bookmark; nothing was cached, retrying after a backoff`,
    );
    this.informer = informer;
    this.received = received;
  }
}
