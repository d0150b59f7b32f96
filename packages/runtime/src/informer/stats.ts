/** Counters of an {@link Informer} since it was created. */
export interface InformerStats {
  /** Lists completed (the initial one and relists), paginated or streamed. */
  readonly lists: number;
  /** Lists completed after the first one. */
  readonly relists: number;
  /** Lists that failed (and were retried after a backoff or at once after an expiry). */
  readonly listErrors: number;
  /** Watches opened (a streamed list is one). */
  readonly watches: number;
  /** Watches that failed with an error other than an expiry. */
  readonly watchErrors: number;
  /** Watches that closed within a second without an event. */
  readonly shortWatches: number;
  /** Lists or watches that expired (410). */
  readonly expired: number;
  /** Watch events whose resourceVersion went backwards. */
  readonly regressions: number;
  /** Watch events and list items skipped as malformed. */
  readonly malformed: number;
  /** Objects cached untransformed because the transform threw or broke them. */
  readonly transformErrors: number;
  /** Watch events applied to the cache. */
  readonly events: number;
  /** Times a listener threw or rejected. */
  readonly listenerErrors: number;
  /** Resync rounds run. */
  readonly resyncs: number;
  /** Times `initialList: 'auto'` gave up streamed lists for paginated ones (0 or 1). */
  readonly watchListFallbacks: number;
}

/** The writable counters behind {@link InformerStats}. */
export type InformerCounters = { -readonly [K in keyof InformerStats]: number };

export function newCounters(): InformerCounters {
  return {
    lists: 0,
    relists: 0,
    listErrors: 0,
    watches: 0,
    watchErrors: 0,
    shortWatches: 0,
    expired: 0,
    regressions: 0,
    malformed: 0,
    transformErrors: 0,
    events: 0,
    listenerErrors: 0,
    resyncs: 0,
    watchListFallbacks: 0,
  };
}

/**
 * Why a list ran: the first one (`initial`), after an expiry (`expired`, a 410 from a watch or a
 * list), after a resourceVersion went backwards (`regressed`), after an unexpected failure (`error`),
 * after its shard scope changed (`rescoped`).
 */
export type ListReason = 'initial' | 'expired' | 'regressed' | 'error' | 'rescoped';

/**
 * Why a watch ended (and was restarted): the server closed it normally (`closed`, usually its
 * timeout), it closed at once without events (`short`), it failed (`error`), it expired (`expired`,
 * a 410), or a resourceVersion went backwards (`regressed`).
 */
export type WatchEndReason = 'closed' | 'short' | 'error' | 'expired' | 'regressed';

/** Hooks a metrics adapter implements to observe an informer. Hooks that throw are ignored. */
export interface InformerMetrics {
  /** A list (paginated, or a streamed list up to its end bookmark) was committed after `durationMs`. */
  onList?(informer: string, durationMs: number, detail: ListDetail): void;
  /** A watch ended for `reason`; the informer watches (or relists) again. */
  onWatchEnd?(informer: string, reason: WatchEndReason): void;
}

/** What {@link InformerMetrics.onList} is told besides the duration. */
export interface ListDetail {
  readonly method: 'paginated' | 'watch-list';
  readonly reason: ListReason;
  readonly objects: number;
}
