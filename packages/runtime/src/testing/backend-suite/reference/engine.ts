import {
  apiVersionOf,
  BadRequestError,
  ConflictError,
  NotFoundError,
  qualifiedResource,
  type ResourceType,
  typeId,
} from '../../../backend/index.ts';
import type { Clock } from '../../../clock/index.ts';
import type { KubeObject, ObjectKey, ObjectMeta } from '../../../object/index.ts';
import { deepEqual, type JsonObject } from './json.ts';
import { VersionedStore } from './store.ts';
import { FieldErrors, validateMeta } from './validation.ts';

/** A served type and its id. */
export interface Served {
  readonly type: ResourceType;
  readonly id: string;
}

/** Changes to metadata: a value sets the field, `undefined` removes it. */
export type MetaChanges = { -readonly [K in keyof ObjectMeta]?: ObjectMeta[K] | undefined };

/** The object with `metadata` replaced by `changes` applied to it; `undefined` removes a field. */
export function withMetadata(object: KubeObject, changes: MetaChanges): KubeObject {
  const metadata: Record<string, unknown> = { ...object.metadata };
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) delete metadata[key];
    else metadata[key] = value;
  }
  return { ...object, metadata: metadata as ObjectMeta };
}

/** Everything but metadata and (with a status subresource) status: what bumps generation. */
function specLike(object: KubeObject, type: ResourceType): JsonObject {
  const { metadata: _m, ...rest } = object as unknown as JsonObject;
  if (type.statusSubresource === true) delete rest.status;
  return rest;
}

/**
 * The state and shared rules of the reference backend: served types, the versioned store, keys,
 * and the final step of every update (generation, finalizer rules, validation, no-op detection,
 * deletion once the last finalizer is gone).
 */
export class Engine {
  readonly store = new VersionedStore();
  readonly clock: Clock;
  readonly #types = new Map<string, ResourceType>();
  readonly #byKind = new Map<string, ResourceType>();
  readonly #onCommit: () => void;

  constructor(types: readonly ResourceType[], clock: Clock, onCommit: () => void) {
    this.clock = clock;
    this.#onCommit = onCommit;
    for (const type of types) {
      this.#types.set(typeId(type), type);
      this.#byKind.set(`${apiVersionOf(type)}\u0000${type.kind}`, type);
    }
  }

  /** The served type with this identity, or a NotFoundError. */
  served(type: ResourceType): Served {
    const id = typeId(type);
    const known = this.#types.get(id);
    if (known === undefined) {
      throw new NotFoundError(
        `the server could not find the requested resource (${qualifiedResource(type)})`,
      );
    }
    return { type: known, id };
  }

  /** The served type of an apiVersion and kind. */
  resolve(apiVersion: string, kind: string): ResourceType | undefined {
    return this.#byKind.get(`${apiVersion}\u0000${kind}`);
  }

  /** Every served type. */
  types(): IterableIterator<[string, ResourceType]> {
    return this.#types.entries();
  }

  /** Checks that a key fits the type's scope. */
  checkKey(type: ResourceType, key: ObjectKey): void {
    if (type.namespaced && key.namespace === '') {
      throw new BadRequestError(`${qualifiedResource(type)} is namespaced: a namespace is required`);
    }
    if (!type.namespaced && key.namespace !== '') {
      throw new BadRequestError(`${qualifiedResource(type)} is cluster-scoped: the namespace must be empty`);
    }
  }

  notFound(type: ResourceType, name: string): NotFoundError {
    return new NotFoundError(`${qualifiedResource(type)} ${JSON.stringify(name)} not found`, {
      details: { name, group: type.group, kind: type.plural },
    });
  }

  conflict(type: ResourceType, name: string, why: string): ConflictError {
    return new ConflictError(
      `Operation cannot be fulfilled on ${qualifiedResource(type)} ${JSON.stringify(name)}: ${why}`,
      { details: { name, group: type.group, kind: type.plural } },
    );
  }

  /** The stored object under `key`, or a NotFoundError. */
  current({ type, id }: Served, key: ObjectKey): KubeObject {
    this.checkKey(type, key);
    const object = this.store.latest(id, key);
    if (object === undefined) throw this.notFound(type, key.name);
    return object;
  }

  /** Now, as `metav1.Time` (RFC 3339, seconds). */
  timestamp(): string {
    return new Date(this.clock.now()).toISOString().replace(/\.\d+Z$/, 'Z');
  }

  /** Stores a new object. */
  put(id: string, key: ObjectKey, object: KubeObject): KubeObject {
    const stored = this.store.put(id, key, object);
    this.#onCommit();
    return stored;
  }

  /** Deletes an object; returns its last state with the deletion's resourceVersion. */
  remove(id: string, key: ObjectKey): KubeObject {
    const gone = this.store.remove(id, key);
    this.#onCommit();
    return gone;
  }

  /**
   * The last step of every update: `next` is the full next state (server fields already carried
   * over from `current`). Computes generation, enforces the finalizer rule, validates, skips no-op
   * writes, and deletes the object when it is terminating and its last finalizer is gone.
   */
  commitUpdate(served: Served, current: KubeObject, next: KubeObject, dryRun: boolean): KubeObject {
    const { type, id } = served;
    const name = current.metadata.name ?? '';
    const errors = new FieldErrors();
    validateMeta(errors, next, type);
    if (current.metadata.deletionTimestamp !== undefined) {
      const before = new Set(current.metadata.finalizers ?? []);
      for (const finalizer of next.metadata.finalizers ?? []) {
        if (!before.has(finalizer)) {
          errors.forbidden(
            'metadata.finalizers',
            `no new finalizers can be added if the object is being deleted, found new finalizers ["${finalizer}"]`,
          );
        }
      }
    }
    errors.throwIfAny(type, name);
    let candidate = withMetadata(next, { resourceVersion: current.metadata.resourceVersion });
    if (type.generation !== false) {
      const changed = !deepEqual(specLike(current, type), specLike(candidate, type));
      const generation = (current.metadata.generation ?? 0) + (changed ? 1 : 0);
      candidate = withMetadata(candidate, { generation });
    } else {
      candidate = withMetadata(candidate, { generation: undefined });
    }
    if (deepEqual(candidate, current)) return current;
    if (dryRun) return candidate;
    const key = { namespace: current.metadata.namespace ?? '', name };
    const terminating = candidate.metadata.deletionTimestamp !== undefined;
    if (terminating && (candidate.metadata.finalizers ?? []).length === 0) return this.remove(id, key);
    return this.put(id, key, candidate);
  }
}
