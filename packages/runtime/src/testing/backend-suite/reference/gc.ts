import type { ResourceType } from '../../../backend/index.ts';
import type { KubeObject, ObjectKey, OwnerReference } from '../../../object/index.ts';
import { type Engine, type Served, withMetadata } from './engine.ts';
import { remove } from './writes.ts';

const ORPHAN = 'orphan';
const FOREGROUND = 'foregroundDeletion';
/** Passes per collection run; each pass makes progress or the run stops. */
const MAX_PASSES = 1000;

function keyOf(object: KubeObject): ObjectKey {
  return { namespace: object.metadata.namespace ?? '', name: object.metadata.name ?? '' };
}

type OwnerState = 'live' | 'gone' | 'waiting';

/**
 * The garbage collector of the reference backend, run after writes: Background deletes dependents
 * whose owners are all gone; Orphan strips the owner's references from dependents, then drops the
 * `orphan` finalizer; Foreground deletes dependents and drops `foregroundDeletion` once no dependent
 * with `blockOwnerDeletion` is left. Dependents that still have a live owner lose only the dangling
 * references.
 */
export class GarbageCollector {
  readonly #engine: Engine;

  constructor(engine: Engine) {
    this.#engine = engine;
  }

  /** Collects until nothing is left to do. */
  run(): void {
    for (let pass = 0; pass < MAX_PASSES; pass++) if (!this.#pass()) return;
  }

  #served(typeId: string): Served {
    for (const [id, type] of this.#engine.types()) if (id === typeId) return { type, id };
    throw new Error(`reference backend: unknown type ${typeId}`);
  }

  /** One change at most; returns whether it changed something. */
  #pass(): boolean {
    const objects = [...this.#engine.store.all()];
    for (const { typeId, object } of objects) {
      if (object.metadata.deletionTimestamp === undefined) continue;
      const finalizers = object.metadata.finalizers ?? [];
      if (finalizers.includes(ORPHAN) && this.#orphan(typeId, object, objects)) return true;
      if (finalizers.includes(FOREGROUND) && this.#foreground(typeId, object, objects)) return true;
    }
    for (const { typeId, object } of objects) {
      if (this.#collect(typeId, object)) return true;
    }
    return false;
  }

  #dependents(owner: KubeObject, objects: readonly { typeId: string; object: KubeObject }[]) {
    const uid = owner.metadata.uid;
    return objects.filter(({ object }) => (object.metadata.ownerReferences ?? []).some((r) => r.uid === uid));
  }

  #dropRefs(typeId: string, dependent: KubeObject, drop: (ref: OwnerReference) => boolean): void {
    const ownerReferences = (dependent.metadata.ownerReferences ?? []).filter((r) => !drop(r));
    const next = withMetadata(dependent, {
      ownerReferences: ownerReferences.length === 0 ? undefined : ownerReferences,
    });
    this.#engine.commitUpdate(this.#served(typeId), dependent, next, false);
  }

  #dropFinalizer(typeId: string, object: KubeObject, finalizer: string): void {
    const finalizers = (object.metadata.finalizers ?? []).filter((f) => f !== finalizer);
    this.#engine.commitUpdate(this.#served(typeId), object, withMetadata(object, { finalizers }), false);
  }

  #orphan(
    typeId: string,
    owner: KubeObject,
    objects: readonly { typeId: string; object: KubeObject }[],
  ): boolean {
    const uid = owner.metadata.uid;
    for (const dependent of this.#dependents(owner, objects)) {
      this.#dropRefs(dependent.typeId, dependent.object, (r) => r.uid === uid);
    }
    this.#dropFinalizer(typeId, owner, ORPHAN);
    return true;
  }

  #foreground(
    typeId: string,
    owner: KubeObject,
    objects: readonly { typeId: string; object: KubeObject }[],
  ): boolean {
    const uid = owner.metadata.uid;
    const dependents = this.#dependents(owner, objects);
    let changed = false;
    for (const { typeId: depType, object } of dependents) {
      if (object.metadata.deletionTimestamp !== undefined) continue;
      const blocking = (object.metadata.ownerReferences ?? []).some(
        (r) => r.uid === uid && r.blockOwnerDeletion === true,
      );
      remove(this.#engine, this.#served(depType), keyOf(object), {
        propagationPolicy: blocking ? 'Foreground' : 'Background',
      });
      changed = true;
    }
    if (changed) return true;
    const blocked = dependents.some(({ object }) =>
      (object.metadata.ownerReferences ?? []).some((r) => r.uid === uid && r.blockOwnerDeletion === true),
    );
    if (blocked) return false;
    this.#dropFinalizer(typeId, owner, FOREGROUND);
    return true;
  }

  #ownerState(dependent: KubeObject, ref: OwnerReference): OwnerState {
    const type: ResourceType | undefined = this.#engine.resolve(ref.apiVersion, ref.kind);
    // An owner of a kind this backend does not serve cannot be checked: treat it as live.
    if (type === undefined) return 'live';
    const { id } = this.#engine.served(type);
    const namespace = type.namespaced ? (dependent.metadata.namespace ?? '') : '';
    const owner = this.#engine.store.latest(id, { namespace, name: ref.name });
    if (owner === undefined || owner.metadata.uid !== ref.uid) return 'gone';
    const waiting =
      owner.metadata.deletionTimestamp !== undefined &&
      (owner.metadata.finalizers ?? []).includes(FOREGROUND);
    return waiting ? 'waiting' : 'live';
  }

  /** Deletes a dependent whose owners are all gone or waiting; strips dangling refs otherwise. */
  #collect(typeId: string, dependent: KubeObject): boolean {
    const refs = dependent.metadata.ownerReferences ?? [];
    if (refs.length === 0) return false;
    const states = refs.map((ref) => this.#ownerState(dependent, ref));
    if (states.every((s) => s === 'live')) return false;
    if (states.includes('live')) {
      this.#dropRefs(typeId, dependent, (ref) => this.#ownerState(dependent, ref) !== 'live');
      return true;
    }
    if (dependent.metadata.deletionTimestamp !== undefined) return false;
    const blocking = refs.some((r, i) => states[i] === 'waiting' && r.blockOwnerDeletion === true);
    remove(this.#engine, this.#served(typeId), keyOf(dependent), {
      propagationPolicy: blocking ? 'Foreground' : 'Background',
    });
    return true;
  }
}
