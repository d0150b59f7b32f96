import type { Clock, Informer, InformerMetrics, ListDetail, WatchEndReason } from '@converge/runtime';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { LIST_BUCKETS, Names } from './names.ts';

/** What the metrics need of a registry of informers (an `InformerRegistry`, `manager.informers`). */
export interface InstrumentableInformers {
  informers(): Informer[];
  observe(hooks: InformerMetrics): void;
}

/** The informer metrics of one registry, and the informer registries they observe. */
export class InformerCollectors {
  readonly #sources: InstrumentableInformers[] = [];
  readonly #list: Histogram<'informer' | 'method' | 'reason'>;
  readonly #relists: Counter<'informer' | 'reason'>;
  readonly #restarts: Counter<'informer' | 'reason'>;

  constructor(registry: Registry, clock: Clock) {
    const registers = [registry];
    const informers = (): Informer[] => this.#sources.flatMap((s) => s.informers());
    this.#list = new Histogram({
      name: Names.listDuration,
      help: 'Seconds an informer took to list its kind (a paginated list, or a streamed list up to its end bookmark), by method and reason (initial, expired, regressed, error)',
      labelNames: ['informer', 'method', 'reason'],
      buckets: [...LIST_BUCKETS],
      registers,
    });
    this.#relists = new Counter({
      name: Names.relists,
      help: 'Lists after the first one, by reason: expired (410 Gone), regressed (a resourceVersion went backwards), error',
      labelNames: ['informer', 'reason'],
      registers,
    });
    this.#restarts = new Counter({
      name: Names.watchRestarts,
      help: 'Watches that ended and were restarted, by reason: closed (server timeout), short (closed at once without events), error, expired, regressed',
      labelNames: ['informer', 'reason'],
      registers,
    });
    new Gauge({
      name: Names.resourceVersionAge,
      help: 'Seconds since the newest resourceVersion an informer has seen last advanced (an event, a bookmark or a list): how stale its cache may be',
      labelNames: ['informer'],
      registers,
      collect() {
        this.reset();
        const now = clock.now();
        for (const informer of informers()) {
          const at = informer.resourceVersionSeenAt;
          if (!Number.isNaN(at)) this.labels(informer.name).set(Math.max(0, now - at) / 1000);
        }
      },
    });
    new Gauge({
      name: Names.informerSynced,
      help: '1 once an informer has listed its kind and filled its cache, else 0',
      labelNames: ['informer'],
      registers,
      collect() {
        this.reset();
        for (const informer of informers()) this.labels(informer.name).set(informer.hasSynced() ? 1 : 0);
      },
    });
  }

  add(source: InstrumentableInformers): void {
    if (this.#sources.includes(source)) return;
    this.#sources.push(source);
    source.observe({
      onList: (informer: string, durationMs: number, detail: ListDetail) => {
        this.#list.labels(informer, detail.method, detail.reason).observe(durationMs / 1000);
        if (detail.reason !== 'initial') this.#relists.labels(informer, detail.reason).inc();
      },
      onWatchEnd: (informer: string, reason: WatchEndReason) => this.#restarts.labels(informer, reason).inc(),
    });
  }
}
