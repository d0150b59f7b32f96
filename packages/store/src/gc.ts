import type { KubeObject, OwnerReference, PropagationPolicy } from '@converge/runtime';
import type { ServedType, StoreCore } from './core.ts';
import { deleteObject } from './delete.ts';
import type { Draft } from './draft.ts';
import { withMutableMeta } from './json.ts';
import { encodeKey, namespaceRange } from './keys.ts';
import { FOREGROUND_FINALIZER, namespaceEmpty, ORPHAN_FINALIZER } from './namespaces.ts';
import type { TypeData } from './type-data.ts';
import { updateObject } from './update.ts';

/** Work items per turn before the collector yields to I/O. */
const BATCH = 1_000;

type OwnerState = 'absent' | 'waiting' | 'solid';

function terminating(object: KubeObject): boolean {
  return object.metadata.deletionTimestamp !== undefined;
}

function hasFinalizer(object: KubeObject, finalizer: string): boolean {
  return object.metadata.finalizers?.includes(finalizer) === true;
}

/**
 * The in-store controllers of kube-controller-manager: the owner-reference garbage collector and
 * the namespace lifecycle. It reacts to commits and works through a deduplicated queue of items —
 * an object whose owners may be gone (`o:uid`), an owner being deleted with `foregroundDeletion` or
 * `orphan` (`w:uid`), a terminating namespace (`n:name`) — after the current turn of the event loop
 * (`setImmediate`), in batches, so it runs asynchronously like a controller (the write that
 * triggered it has returned) yet deterministically (no timers, no clock).
 *
 * - Background: an object whose owners are all gone is deleted; one that still has a live owner
 *   loses only its dangling references.
 * - Foreground: the owner's dependents are deleted (foreground themselves if they own objects);
 *   once no dependent with `blockOwnerDeletion: true` is left, `foregroundDeletion` is removed.
 * - Orphan: the owner's reference is removed from every dependent, then `orphan` is removed.
 * - Namespace: every object in a terminating namespace is deleted (finalizers respected); when it is
 *   empty and has no finalizers, the Namespace goes.
 *
 * Owner references to kinds this store does not serve are left alone (the owner may live in
 * another backend).
 */
export class GarbageCollector {
  readonly #core: StoreCore;
  #queue: string[] = [];
  readonly #queued = new Set<string>();
  #scheduled = false;
  #idle: (() => void)[] = [];

  constructor(core: StoreCore) {
    this.#core = core;
  }

  /** Resolves when no work is queued. */
  settled(): Promise<void> {
    if (this.#queue.length === 0 && !this.#scheduled) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Reacts to one committed write. */
  onCommit(td: TypeData, prev: KubeObject | undefined, next: KubeObject | undefined): void {
    const core = this.#core;
    if (next === undefined) {
      const gone = prev as KubeObject;
      const uid = gone.metadata.uid ?? '';
      for (const dependent of core.dependentsOf(uid)) this.#enqueue(`o:${dependent}`);
      for (const ref of gone.metadata.ownerReferences ?? []) this.#wakeOwner(ref.uid);
      const namespace = gone.metadata.namespace ?? '';
      if (namespace !== '' && td.type?.namespaced === true) this.#enqueueNamespace(namespace);
      return;
    }
    const uid = next.metadata.uid ?? '';
    if (
      terminating(next) &&
      (hasFinalizer(next, FOREGROUND_FINALIZER) || hasFinalizer(next, ORPHAN_FINALIZER))
    ) {
      this.#enqueue(`w:${uid}`);
    }
    if (td === core.namespaceType && terminating(next)) this.#enqueue(`n:${next.metadata.name ?? ''}`);
    const before = prev?.metadata.ownerReferences;
    const after = next.metadata.ownerReferences;
    if (before === after) return;
    if ((after ?? []).some((ref) => this.#ownerState(next, ref) !== 'solid')) this.#enqueue(`o:${uid}`);
    for (const ref of before ?? []) {
      const still = after?.find((r) => r.uid === ref.uid);
      if (still === undefined || still.blockOwnerDeletion !== ref.blockOwnerDeletion)
        this.#wakeOwner(ref.uid);
    }
  }

  /** Queues the work a type needs after it is registered (e.g. reopened from disk mid-deletion). */
  resync(td: ServedType): void {
    for (const [, object] of td.objects()) {
      if (!terminating(object)) continue;
      this.#enqueue(`w:${object.metadata.uid ?? ''}`);
      if (td === this.#core.namespaceType) this.#enqueue(`n:${object.metadata.name ?? ''}`);
    }
    if (td.type.namespaced && this.#core.namespaceType !== undefined) {
      for (const [, ns] of this.#core.namespaceType.objects()) {
        if (terminating(ns)) this.#enqueue(`n:${ns.metadata.name ?? ''}`);
      }
    }
  }

  #wakeOwner(uid: string): void {
    const owner = this.#core.byUid(uid);
    if (
      owner !== undefined &&
      terminating(owner.object) &&
      hasFinalizer(owner.object, FOREGROUND_FINALIZER)
    ) {
      this.#enqueue(`w:${uid}`);
    }
  }

  #enqueueNamespace(namespace: string): void {
    const nsType = this.#core.namespaceType;
    const ns = nsType?.latest(encodeKey('', namespace));
    if (ns !== undefined && terminating(ns)) this.#enqueue(`n:${namespace}`);
  }

  #enqueue(item: string): void {
    if (this.#queued.has(item)) return;
    this.#queued.add(item);
    this.#queue.push(item);
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.#run());
    }
  }

  #run(): void {
    const queue = this.#queue;
    let done = 0;
    while (done < queue.length && done < BATCH && !this.#core.closed) {
      const item = queue[done++] as string;
      this.#queued.delete(item);
      try {
        this.#process(item);
      } catch (error) {
        this.#core.options.logger.warn(
          { store: this.#core.options.name, item, err: error },
          'Garbage collector step failed',
        );
      }
    }
    this.#queue = queue.slice(done);
    if (this.#queue.length > 0 && !this.#core.closed) {
      setImmediate(() => this.#run());
      return;
    }
    this.#queue = [];
    this.#queued.clear();
    this.#scheduled = false;
    for (const resolve of this.#idle.splice(0)) resolve();
  }

  #process(item: string): void {
    const id = item.slice(2);
    if (item.startsWith('o:')) this.#attemptToDelete(id);
    else if (item.startsWith('w:')) this.#processDeletingOwner(id);
    else this.#processNamespace(id);
  }

  /** Whether the owner `ref` points at exists, is being deleted in the foreground, or is gone. */
  #ownerState(dependent: KubeObject, ref: OwnerReference): OwnerState {
    const type = this.#core.byKind(ref.apiVersion, ref.kind);
    if (type === undefined) return 'solid';
    const owner = this.#core.byUid(ref.uid);
    if (owner === undefined || owner.td !== type || owner.object.metadata.name !== ref.name) return 'absent';
    const depNs = dependent.metadata.namespace ?? '';
    const ownerNs = owner.object.metadata.namespace ?? '';
    if (depNs !== '' && ownerNs !== '' && depNs !== ownerNs) return 'absent';
    return terminating(owner.object) && hasFinalizer(owner.object, FOREGROUND_FINALIZER)
      ? 'waiting'
      : 'solid';
  }

  /** Background / foreground collection of one dependent. */
  #attemptToDelete(uid: string): void {
    const entry = this.#core.byUid(uid);
    if (entry === undefined || terminating(entry.object) || entry.td.type === undefined) return;
    const td = entry.td as ServedType;
    const refs = entry.object.metadata.ownerReferences ?? [];
    if (refs.length === 0) return;
    const states = refs.map((ref) => this.#ownerState(entry.object, ref));
    if (states.includes('solid')) {
      const keep = refs.filter((_, i) => states[i] === 'solid');
      if (keep.length < refs.length) this.#setOwnerReferences(td, entry.key, entry.object, keep);
      return;
    }
    const policy: PropagationPolicy =
      states.includes('waiting') && this.#core.dependentsOf(uid).length > 0 ? 'Foreground' : 'Background';
    deleteObject(this.#core, td, entry.key, { propagationPolicy: policy, preconditions: { uid } });
  }

  /** An owner terminating with `orphan` or `foregroundDeletion`. */
  #processDeletingOwner(uid: string): void {
    const core = this.#core;
    const entry = core.byUid(uid);
    if (entry === undefined || !terminating(entry.object) || entry.td.type === undefined) return;
    const td = entry.td as ServedType;
    if (hasFinalizer(entry.object, ORPHAN_FINALIZER)) {
      for (const dependent of core.dependentsOf(uid)) {
        const dep = core.byUid(dependent);
        if (dep === undefined || dep.td.type === undefined) continue;
        const keep = (dep.object.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid);
        this.#setOwnerReferences(dep.td as ServedType, dep.key, dep.object, keep);
      }
      this.#removeFinalizer(td, entry.key, ORPHAN_FINALIZER);
      return;
    }
    if (!hasFinalizer(entry.object, FOREGROUND_FINALIZER)) return;
    for (const dependent of core.dependentsOf(uid)) this.#attemptToDelete(dependent);
    const blocked = core.dependentsOf(uid).some((dependent) => {
      const refs = core.byUid(dependent)?.object.metadata.ownerReferences ?? [];
      return refs.some((r) => r.uid === uid && r.blockOwnerDeletion === true);
    });
    if (!blocked) this.#removeFinalizer(td, entry.key, FOREGROUND_FINALIZER);
  }

  /** Deletes everything in a terminating namespace, then the namespace once it is empty. */
  #processNamespace(name: string): void {
    const core = this.#core;
    const nsType = core.namespaceType;
    const key = encodeKey('', name);
    if (nsType === undefined || !terminating(nsType.latest(key) ?? { metadata: {} })) return;
    const { lo, hi } = namespaceRange(name);
    for (const td of core.served()) {
      if (!td.type.namespaced) continue;
      for (const objectKey of td.liveKeys.keys(lo, hi)) {
        const object = td.latest(objectKey);
        if (object === undefined || terminating(object)) continue;
        deleteObject(core, td, objectKey, { preconditions: { uid: object.metadata.uid ?? '' } });
      }
    }
    const ns = nsType.latest(key);
    if (ns !== undefined && namespaceEmpty(core, name) && (ns.metadata.finalizers ?? []).length === 0) {
      core.commit(nsType, key, ns, undefined);
    }
  }

  #setOwnerReferences(
    td: ServedType,
    key: string,
    object: KubeObject,
    refs: readonly OwnerReference[],
  ): void {
    const draft = withMutableMeta(object) as Draft;
    if (refs.length === 0) delete draft.metadata.ownerReferences;
    else draft.metadata.ownerReferences = [...refs];
    updateObject(this.#core, td, draft, { mode: 'main', requireResourceVersion: false, key, dryRun: false });
  }

  #removeFinalizer(td: ServedType, key: string, finalizer: string): void {
    const object = td.latest(key);
    if (object === undefined) return;
    const draft = withMutableMeta(object) as Draft;
    const rest = (object.metadata.finalizers ?? []).filter((f) => f !== finalizer);
    if (rest.length === 0) delete draft.metadata.finalizers;
    else draft.metadata.finalizers = rest;
    updateObject(this.#core, td, draft, { mode: 'main', requireResourceVersion: false, key, dryRun: false });
  }
}
