import type { Backend, ResourceType } from '../backend/index.ts';
import type { Clock } from '../clock/index.ts';
import { OptionsError } from '../errors.ts';
import type { InformerRegistry } from '../informer/index.ts';
import type { Logger } from '../log/index.ts';
import type { Runnable } from '../runnable/index.ts';
import { OrphanCollector } from './orphan-collector.ts';
import type { OrphanCollectorOptions } from './orphan-collector-options.ts';

/** What {@link collectOrphans} needs from a manager (a `Manager` is one). */
export interface OrphanCollectorHost {
  readonly informers: InformerRegistry;
  /** The default backend of owners and secondaries. Read only when one of them names none. */
  readonly backend: Backend;
  readonly clock: Clock;
  readonly logger: Logger;
  add(runnable: Runnable, options?: { readonly name?: string }): void;
}

/** Options of {@link collectOrphans}: those of {@link OrphanCollector}, with the host's defaults. */
export interface CollectOrphansOptions
  extends Omit<OrphanCollectorOptions, 'informers' | 'ownerBackend' | 'secondaries' | 'clock' | 'logger'> {
  /** Where the owners live. Default: the host's backend. */
  readonly ownerBackend?: Backend;
  /** The owned kinds, each with its backend (default: the host's) and optional namespace. */
  readonly secondaries: readonly {
    readonly type: ResourceType;
    readonly backend?: Backend;
    readonly namespace?: string;
  }[];
}

/**
 * Creates an {@link OrphanCollector} over the manager's shared informers, clock and logger, adds
 * it to the manager (leader-gated unless `needLeaderElection: false`) and returns it. Call it
 * before `manager.start` so its informers sync with the others.
 *
 * @example
 * // Websites live in NATS, their ConfigMaps in Kubernetes.
 * manager.controller(websiteType).owns(configMapType, { backend: kube }).complete(reconcile);
 * collectOrphans(manager, { ownerType: websiteType, secondaries: [{ type: configMapType, backend: kube }] });
 */
export function collectOrphans(host: OrphanCollectorHost, options: CollectOrphansOptions): OrphanCollector {
  if (typeof options !== 'object' || options === null) {
    throw new OptionsError('options', options, 'a CollectOrphansOptions object');
  }
  const { secondaries } = options;
  if (!Array.isArray(secondaries)) {
    throw new OptionsError('secondaries', secondaries, 'a non-empty array of { type, backend? }');
  }
  const collector = new OrphanCollector({
    ...options,
    informers: host.informers,
    ownerBackend: options.ownerBackend ?? host.backend,
    secondaries: secondaries.map((s) =>
      typeof s === 'object' && s !== null && s.backend === undefined ? { ...s, backend: host.backend } : s,
    ) as OrphanCollectorOptions['secondaries'],
    clock: host.clock,
    logger: host.logger,
  });
  host.add(collector, { name: collector.name });
  return collector;
}
