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
