import {
  type Backend,
  isConflict,
  isNotFound,
  type ResourceType,
  resourceType,
  typeId,
} from '../backend/index.ts';
import { type Clock, realClock } from '../clock/index.ts';
import { AlreadyStartedError, OptionsError } from '../errors.ts';
import type { InformerHandle, InformerRegistry } from '../informer/index.ts';
import { type Logger, noopLogger } from '../log/index.ts';
import type { KubeObject, ObjectKey } from '../object/index.ts';
import { positiveDurationMs } from '../options.ts';
import type { Runnable } from '../runnable/index.ts';
import {
  backendOption,
  type OrphanCollectorOptions,
  type OrphanCollectorStats,
  type OrphanRound,
  type OrphanSecondary,
  secondaryOption,
} from './orphan-collector-options.ts';
import { type ResolvedOwnerLabelScheme, resolveOwnerLabelScheme } from './owner-label-scheme.ts';
import { type LabelOwner, ownedByKindSelector, ownerOf, recordsKind } from './owner-labels.ts';

interface Watched {
  readonly spec: OrphanSecondary;
  readonly handle: InformerHandle;
}

type Verdict = 'alive' | 'orphan';

/**
 * Deletes objects whose label-recorded owner no longer exists (Kumori's `GarbageSecondaries`): the
 * garbage collection Kubernetes does for owner references, for owners in another backend.
 *
 * It acquires its informers when created — the owners, and each secondary kind filtered by
 * `converge.dev/owner-kind=<kind>` (the kind label of `ownerLabels`; the same informers the builder's label-owned `owns` uses, so
 * they are shared) — and does nothing until every informer of the registry has synced. Then, once
 * at start and every `intervalMs`, a round looks at each cached owned object:
 *
 * 1. An object without decodable owner labels, owned by another kind, or already being deleted is
 *    skipped. So is one whose owner is in the owner cache with the recorded uid.
 * 2. Otherwise the owner is read live from its backend. NotFound, or an owner with another uid than
 *    the recorded one (the owner was deleted and re-created: the object belonged to the old one, as
 *    Kubernetes' garbage collector decides), makes the object an orphan. Any other error stops the
 *    round: that object and the rest wait for the next round (nothing is deleted on doubt).
 * 3. An orphan is deleted with Background propagation and preconditions on its uid and
 *    resourceVersion, so an object re-created or adopted since it was read is not deleted (the
 *    conflict is counted and the next round looks again).
 *
 * It never deletes an object whose recorded owner exists when the owner is read. With a recorded
 * uid that holds at the moment of the delete as well: a re-created owner has a new uid, and an
 * adoption changes the object's resourceVersion. Without a uid (owners from a backend that sets
 * none), an owner re-created between the read and the delete is not noticed.
 *
 * Each deletion is logged (`Deleted an orphaned object`) and counted ({@link stats}).
 * Leader-gated by default. Stops promptly when its signal aborts.
 *
 * @example
 * const collector = new OrphanCollector({
 *   informers: manager.informers,
 *   ownerType: websiteType,
 *   ownerBackend: nats,
 *   secondaries: [{ type: configMapType, backend: kube }],
 *   clock: manager.clock,
 *   logger: manager.logger,
 * });
 * manager.add(collector, { name: 'orphans:website' });
 */
export class OrphanCollector implements Runnable {
  readonly name: string;
  readonly needLeaderElection: boolean;
  readonly #registry: InformerRegistry;
  readonly #ownerType: ResourceType;
  readonly #ownerBackend: Backend;
  readonly #scheme: ResolvedOwnerLabelScheme;
  readonly #owners: InformerHandle;
  readonly #secondaries: readonly Watched[];
  readonly #intervalMs: number;
  readonly #clock: Clock;
  readonly #log: Logger;
  #started = false;
  #released = false;
  #stats: { -readonly [K in keyof OrphanCollectorStats]: number } = {
    rounds: 0,
    roundsStopped: 0,
    examined: 0,
    deleted: 0,
    conflicts: 0,
    deleteErrors: 0,
    ownerLookupErrors: 0,
    unparseableOwners: 0,
  };
  /** Objects already reported as unparseable (by backend, kind, uid or key), pruned every round. */
  #unparseable = new Set<string>();

  constructor(options: OrphanCollectorOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new OptionsError('options', options, 'an OrphanCollectorOptions object');
    }
    const { informers, secondaries } = options;
    if (typeof informers?.acquire !== 'function') {
      throw new OptionsError('informers', informers, 'an InformerRegistry');
    }
    this.#ownerType = resourceType(options.ownerType);
    this.#ownerBackend = backendOption('ownerBackend', options.ownerBackend);
    if (!Array.isArray(secondaries) || secondaries.length === 0) {
      throw new OptionsError('secondaries', secondaries, 'a non-empty array of { type, backend }');
    }
    const specs = secondaries.map((s: OrphanSecondary, i) => secondaryOption(i, s));
    this.#intervalMs = positiveDurationMs('intervalMs', options.intervalMs, 60_000);
    this.#clock = options.clock ?? realClock;
    this.name = options.name ?? `orphans:${this.#ownerType.kind.toLowerCase()}`;
    const needLeaderElection = options.needLeaderElection ?? true;
    if (typeof needLeaderElection !== 'boolean') {
      throw new OptionsError('needLeaderElection', needLeaderElection, 'a boolean');
    }
    this.needLeaderElection = needLeaderElection;
    this.#log = (options.logger ?? noopLogger).child({ collector: this.name });
    this.#registry = informers;
    this.#scheme = resolveOwnerLabelScheme(options.ownerLabels);
    const selector = ownedByKindSelector(this.#ownerType, this.#scheme);
    this.#owners = informers.acquire({
      backend: this.#ownerBackend,
      type: this.#ownerType,
      ...(options.ownerNamespace === undefined ? {} : { namespace: options.ownerNamespace }),
    });
    this.#secondaries = specs.map((spec) => ({
      spec,
      handle: informers.acquire({
        backend: spec.backend,
        type: spec.type,
        labelSelector: selector,
        ...(spec.namespace === undefined ? {} : { namespace: spec.namespace }),
      }),
    }));
  }

  /** Counters since creation. */
  stats(): OrphanCollectorStats {
    return { ...this.#stats };
  }

  /**
   * Waits until every informer of the registry has synced, then runs a round at once and one
   * every `intervalMs` until `signal` aborts. Releases its informers when it stops. Starts once.
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new AlreadyStartedError(`orphan collector ${this.name}`);
    this.#started = true;
    try {
      if (!(await this.#waitForSync(signal))) return;
      while (!signal.aborted) {
        try {
          await this.collect(signal);
        } catch (error) {
          if (signal.aborted) break;
          this.#log.error({ err: error }, 'Orphan collection round failed');
        }
        try {
          await this.#clock.sleep(this.#intervalMs, signal);
        } catch {
          break;
        }
      }
    } finally {
      this.#released = true;
      this.#owners.release();
      for (const { handle } of this.#secondaries) handle.release();
    }
  }

  /**
   * Runs one round now (see the class description) and reports what it did. Does nothing, with
   * `synced: false`, while any informer of the registry has not synced (and after the collector
   * stopped). Never rejects for backend errors: they are logged, counted and reported.
   */
  async collect(signal?: AbortSignal): Promise<OrphanRound> {
    const round = {
      synced: true,
      examined: 0,
      confirmed: 0,
      conflicts: 0,
      deleted: [] as OrphanRound['deleted'][number][],
    };
    // After stop the informers are released and their caches frozen in the past: do nothing.
    if (this.#released || !this.#registry.hasSynced() || !this.#owners.informer.hasSynced()) {
      return { ...round, synced: false };
    }
    this.#stats.rounds++;
    const candidates: { watched: Watched; object: KubeObject; owner: LabelOwner }[] = [];
    const unparseable = new Set<string>();
    for (const watched of this.#secondaries) {
      for (const object of watched.handle.informer.cache.list()) {
        round.examined++;
        const owner = this.#ownerToCheck(object);
        if (owner === 'unparseable') this.#reportUnparseable(watched, object, unparseable);
        else if (owner !== undefined) candidates.push({ watched, object, owner });
      }
    }
    this.#unparseable = unparseable;
    this.#stats.examined += round.examined;
    for (const { watched, object, owner } of candidates) {
      if (signal?.aborted) break;
      round.confirmed++;
      let verdict: Verdict;
      try {
        verdict = await this.#confirm(owner, signal);
      } catch (error) {
        if (signal?.aborted) break;
        this.#stats.ownerLookupErrors++;
        this.#stats.roundsStopped++;
        this.#log.warn(
          { err: error, ownerNamespace: owner.key.namespace, ownerName: owner.key.name },
          'Owner lookup failed; orphan collection round stopped',
        );
        return { ...round, ownerLookupError: error };
      }
      if (verdict === 'alive') continue;
      const outcome = await this.#delete(watched, object, owner, signal);
      if (outcome === 'deleted') {
        round.deleted.push({
          backend: watched.spec.backend.name,
          kind: watched.spec.type.kind,
          key: keyOf(object),
        });
      } else if (outcome === 'conflict') {
        round.conflicts++;
      }
    }
    return round;
  }

  /**
   * The owner to confirm live; undefined when the object is not ours or its owner is cached alive;
   * 'unparseable' when it is labelled with our kind but its owner key cannot be read.
   */
  #ownerToCheck(object: KubeObject): LabelOwner | 'unparseable' | undefined {
    if (object.metadata.deletionTimestamp !== undefined) return undefined;
    const owner = ownerOf(object, this.#scheme);
    const type = this.#ownerType;
    // The informer holds only objects whose kind label names our kind (its label selector).
    if (owner === undefined) return 'unparseable';
    if (!recordsKind(owner, type)) return undefined;
    // A key that cannot name an object of the owner's scope is malformed: leave the object alone.
    if (type.namespaced === (owner.key.namespace === '')) return 'unparseable';
    const cached = this.#owners.informer.cache.get(owner.key);
    if (cached !== undefined && sameIncarnation(cached, owner)) return undefined;
    return owner;
  }

  /** Logs and counts an object whose owner labels cannot be read, once per object. */
  #reportUnparseable(watched: Watched, object: KubeObject, seen: Set<string>): void {
    const key = keyOf(object);
    const { backend, type } = watched.spec;
    const id = `${backend.name}\u0000${typeId(type)}\u0000${object.metadata.uid ?? `${key.namespace}/${key.name}`}`;
    seen.add(id);
    if (this.#unparseable.has(id)) return;
    this.#stats.unparseableOwners++;
    const labels = object.metadata.labels ?? {};
    const annotations = object.metadata.annotations ?? {};
    this.#log.warn(
      {
        backend: backend.name,
        kind: type.kind,
        namespace: key.namespace,
        name: key.name,
        ownerKind: this.#ownerType.kind,
        keyLabel: labels[this.#scheme.keyLabel],
        keyAnnotation: annotations[this.#scheme.keyAnnotation],
      },
      'Owner labels not understood; object never collected',
    );
  }

  async #confirm(owner: LabelOwner, signal: AbortSignal | undefined): Promise<Verdict> {
    try {
      const live = await this.#ownerBackend.get(
        this.#ownerType,
        owner.key,
        signal === undefined ? {} : { signal },
      );
      return sameIncarnation(live, owner) ? 'alive' : 'orphan';
    } catch (error) {
      if (isNotFound(error)) return 'orphan';
      throw error;
    }
  }

  async #delete(
    watched: Watched,
    object: KubeObject,
    owner: LabelOwner,
    signal: AbortSignal | undefined,
  ): Promise<'deleted' | 'gone' | 'conflict' | 'failed'> {
    const { type, backend } = watched.spec;
    const key = keyOf(object);
    const { uid, resourceVersion } = object.metadata;
    const fields = {
      backend: backend.name,
      kind: type.kind,
      namespace: key.namespace,
      name: key.name,
      ownerKind: owner.kind,
      ownerNamespace: owner.key.namespace,
      ownerName: owner.key.name,
      ...(owner.uid === undefined ? {} : { ownerUid: owner.uid }),
    };
    try {
      await backend.delete(type, key, {
        propagationPolicy: 'Background',
        preconditions: {
          ...(uid === undefined ? {} : { uid }),
          ...(resourceVersion === undefined ? {} : { resourceVersion }),
        },
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (error) {
      if (isNotFound(error)) return 'gone';
      if (isConflict(error)) {
        this.#stats.conflicts++;
        this.#log.debug(fields, 'Orphan changed since it was read; not deleted');
        return 'conflict';
      }
      if (signal?.aborted) return 'failed';
      this.#stats.deleteErrors++;
      this.#log.error({ ...fields, err: error }, 'Failed to delete an orphaned object');
      return 'failed';
    }
    this.#stats.deleted++;
    this.#log.info(fields, 'Deleted an orphaned object');
    return 'deleted';
  }

  async #waitForSync(signal: AbortSignal): Promise<boolean> {
    try {
      await this.#registry.waitForSync(signal);
      await this.#owners.informer.waitForSync(signal);
      for (const { handle } of this.#secondaries) await handle.informer.waitForSync(signal);
      return true;
    } catch (error) {
      if (signal.aborted) return false;
      throw error;
    }
  }
}

/** Whether `owner` is the incarnation `recorded` names: same uid, or no uid to compare. */
function sameIncarnation(owner: KubeObject, recorded: LabelOwner): boolean {
  const uid = owner.metadata.uid;
  return recorded.uid === undefined || uid === undefined || uid === '' || uid === recorded.uid;
}

function keyOf(object: KubeObject): ObjectKey {
  return { namespace: object.metadata.namespace ?? '', name: object.metadata.name ?? '' };
}
