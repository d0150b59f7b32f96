import { Gauge, type Registry } from 'prom-client';
import { Names } from './names.ts';

/**
 * What the metrics need to tell leadership: a `LeaderElector` (`isLeader`, and the Lease record it
 * observed) or a `Manager` (`leading`).
 */
export interface LeadershipSource {
  readonly isLeader?: boolean;
  readonly leading?: boolean;
  readonly observedRecord?: { readonly leaderTransitions?: number } | undefined;
}

/** Leader election gauges, read on every scrape. */
export class LeaderCollectors {
  readonly #sources: { readonly name: string; readonly source: LeadershipSource }[] = [];

  constructor(registry: Registry) {
    const registers = [registry];
    const sources = (): readonly { readonly name: string; readonly source: LeadershipSource }[] =>
      this.#sources;
    new Gauge({
      name: Names.leaderStatus,
      help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
      labelNames: ['name'],
      registers,
      collect() {
        for (const { name, source } of sources()) this.labels(name).set(isLeading(source) ? 1 : 0);
      },
    });
    new Gauge({
      name: Names.leaderTransitions,
      help: 'leaderTransitions of the lease as last observed: it rises each time another replica takes the lease over',
      labelNames: ['name'],
      registers,
      collect() {
        for (const { name, source } of sources()) {
          const transitions = source.observedRecord?.leaderTransitions;
          if (typeof transitions === 'number') this.labels(name).set(transitions);
        }
      },
    });
  }

  add(name: string, source: LeadershipSource): void {
    if (this.#sources.some((s) => s.source === source && s.name === name)) return;
    this.#sources.push({ name, source });
  }
}

function isLeading(source: LeadershipSource): boolean {
  if (typeof source.isLeader === 'boolean') return source.isLeader;
  return source.leading === true;
}
