import { type Backend, type ResourceType, resourceType } from '../backend/index.ts';
import type { Clock } from '../clock/index.ts';
import { OptionsError } from '../errors.ts';
import type { InformerRegistry } from '../informer/index.ts';
import type { Logger } from '../log/index.ts';
import type { ObjectKey } from '../object/index.ts';
import type { OwnerLabelScheme } from './owner-label-scheme.ts';

/** A kind whose objects may be owned, through owner labels, by the collector's owner kind. */
export interface OrphanSecondary {
  readonly type: ResourceType;
  readonly backend: Backend;
  /** Only this namespace. Default: all. */
  readonly namespace?: string;
}

/** Options of an {@link OrphanCollector}. */
export interface OrphanCollectorOptions {
  /** Where the collector gets its informers (a manager's `informers`, so they are shared). */
  readonly informers: InformerRegistry;
  /** The owner kind (the controller's primary kind). */
  readonly ownerType: ResourceType;
  /** The backend the owners live in. */
  readonly ownerBackend: Backend;
  /** Cache owners of this namespace only (match the controller's `for` to share its informer). Default: all. */
  readonly ownerNamespace?: string;
  /** The owned kinds to collect; at least one. */
  readonly secondaries: readonly OrphanSecondary[];
  /**
   * Where the secondaries record their owner. Default `convergeOwnerLabels`; `kumoriOwnerLabels`
   * collects what a Kumori controller labelled. Give the controller's `owns` the same scheme so
   * they share informers.
   */
  readonly ownerLabels?: OwnerLabelScheme;
  /** Time between rounds. Default 60 000. */
  readonly intervalMs?: number;
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Run only while leading (the manager's 'leader' group). Default true. */
  readonly needLeaderElection?: boolean;
  /** Name for logs. Default `orphans:<kind>`. */
  readonly name?: string;
}

/** What one round did. */
export interface OrphanRound {
  /** False when some informer had not synced: the round did nothing. */
  readonly synced: boolean;
  /** Owned objects looked at. */
  readonly examined: number;
  /** Objects whose owner was neither cached nor confirmed alive: checked with a live get. */
  readonly confirmed: number;
  /** The orphans deleted (or whose deletion started), as `backend`, kind and key. */
  readonly deleted: readonly { readonly backend: string; readonly kind: string; readonly key: ObjectKey }[];
  /** Orphans not deleted because they changed since they were read (precondition conflict). */
  readonly conflicts: number;
  /** Set when an owner lookup failed with anything but NotFound: the round stopped there. */
  readonly ownerLookupError?: unknown;
}

/** Counters over the collector's life. */
export interface OrphanCollectorStats {
  readonly rounds: number;
  readonly roundsStopped: number;
  readonly examined: number;
  readonly deleted: number;
  readonly conflicts: number;
  readonly deleteErrors: number;
  readonly ownerLookupErrors: number;
  /**
   * Objects labelled as owned by the collector's kind whose owner key could not be read (a format
   * the scheme's `parseKey` does not know, labels and annotations that disagree, a key of the wrong
   * scope). They are never collected; each is logged once (`Owner labels not understood; object
   * never collected`) and counted once.
   */
  readonly unparseableOwners: number;
}

/** Validates a Backend option. */
export function backendOption(field: string, backend: Backend): Backend {
  if (typeof backend !== 'object' || backend === null || typeof backend.delete !== 'function') {
    throw new OptionsError(field, backend, 'a Backend');
  }
  return backend;
}

/** Validates and normalises `secondaries[index]`. */
export function secondaryOption(index: number, secondary: OrphanSecondary): OrphanSecondary {
  if (typeof secondary !== 'object' || secondary === null) {
    throw new OptionsError(`secondaries[${index}]`, secondary, 'an object { type, backend }');
  }
  const { namespace } = secondary;
  if (namespace !== undefined && typeof namespace !== 'string') {
    throw new OptionsError(`secondaries[${index}].namespace`, namespace, 'a string');
  }
  return {
    type: resourceType(secondary.type),
    backend: backendOption(`secondaries[${index}].backend`, secondary.backend),
    ...(namespace === undefined ? {} : { namespace }),
  };
}
