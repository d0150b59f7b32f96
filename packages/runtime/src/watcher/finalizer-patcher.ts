import {
  isConflict,
  isNotFound,
  type JsonPatchOperation,
  type Patch,
  type PatchOptions,
  type ResourceType,
} from '../backend/index.ts';
import { hasFinalizer, isBeingDeleted } from '../client/index.ts';
import type { Clock } from '../clock/index.ts';
import type { Logger } from '../log/index.ts';
import { type KubeObject, type ObjectKey, objectKey } from '../object/index.ts';
import { FinalizerPatchError } from './errors.ts';

/**
 * What the opinionated watcher and reconciler need to write their finalizer (app-sdk's
 * `PatchClient`): read one object, and JSON-patch it. The runtime `Client` and every `Backend`
 * fit. After a conflict the object is read again through `get`: a client without a cache (or the
 * backend itself) gives the freshest state; a cached client's read-your-writes covers the
 * watcher's own writes, and the growing delay between retries lets its cache catch up with others'.
 */
export interface FinalizerPatchClient {
  get(type: ResourceType, key: ObjectKey, options?: { readonly signal?: AbortSignal }): Promise<KubeObject>;
  patch(type: ResourceType, key: ObjectKey, patch: Patch, options?: PatchOptions): Promise<KubeObject>;
}

/** How a finalizer write ended (a failure is a thrown {@link FinalizerPatchError}). */
export type FinalizerPatchOutcome<T> =
  /** The patch was applied; `object` is the object as stored after it. */
  | { readonly status: 'patched'; readonly object: T }
  /** Nothing to write: the finalizers already were as asked. `object` is the latest state read. */
  | { readonly status: 'unchanged'; readonly object: T }
  /** Not added: the object's deletion started (Kubernetes refuses new finalizers then). */
  | { readonly status: 'deleting'; readonly object: T }
  /** The object does not exist (any more). */
  | { readonly status: 'gone' };

/** Calls of one write share the handler's signal and logger. */
export interface PatchContext {
  readonly signal: AbortSignal;
  readonly logger: Logger;
}

type Plan<T> = readonly JsonPatchOperation[] | FinalizerPatchOutcome<T>;

/**
 * Writes finalizers as JSON patches guarded by the object's resourceVersion (app-sdk v0.43's
 * finalizer updater does the same): each patch sets the whole `metadata.finalizers` list and
 * carries `replace /metadata/resourceVersion` with the version it was computed from, which the
 * apiserver (and every Converge backend) treats as a precondition: a stale one is a 409
 * ConflictError. Two choices differ from app-sdk, both because the apiserver applies the patch
 * before it checks the resourceVersion: a `test` of the resourceVersion would fail with a 422
 * Invalid instead (indistinguishable from a malformed patch), and app-sdk's index-based
 * `remove /metadata/finalizers/<i>` fails with a 422 (index out of bounds) when another writer
 * shortened the list first. Setting the whole list leaves every concurrent change to the 409.
 *
 * On a conflict the object is read again and the patch recomputed, up to `conflictRetries` times,
 * after `attempt × 1 s + up to 500 ms` of jitter on the clock (0–0.5 s, 1–1.5 s, 2–2.5 s). A
 * NotFound from the patch or the read means the object is gone: for a removal that is success.
 * Without a resourceVersion (an object that never came from a backend) a patch is guarded by a
 * `test` of the list it replaces.
 */
export class FinalizerPatcher {
  readonly #client: FinalizerPatchClient;
  readonly #type: ResourceType;
  readonly #clock: Clock;
  readonly #conflictRetries: number;

  constructor(client: FinalizerPatchClient, type: ResourceType, clock: Clock, conflictRetries: number) {
    this.#client = client;
    this.#type = type;
    this.#clock = clock;
    this.#conflictRetries = conflictRetries;
  }

  /** Adds `finalizer` unless present; refuses (`deleting`) once deletion started. */
  add<T extends KubeObject>(
    object: T,
    finalizer: string,
    context: PatchContext,
  ): Promise<FinalizerPatchOutcome<T>> {
    return this.#write('add', finalizer, object, context, (current) => {
      if (hasFinalizer(current, finalizer)) return { status: 'unchanged', object: current };
      if (isBeingDeleted(current)) return { status: 'deleting', object: current };
      return setFinalizers(current, [...finalizersOf(current), finalizer]);
    });
  }

  /**
   * Puts `to` in place of `from` in one write (the in-progress finalizer becoming the final one).
   * With `to` already present it only removes `from`; with `from` absent it only adds `to`.
   */
  replace<T extends KubeObject>(
    object: T,
    from: string,
    to: string,
    context: PatchContext,
  ): Promise<FinalizerPatchOutcome<T>> {
    return this.#write('replace', to, object, context, (current) => {
      const finalizers = finalizersOf(current);
      if (finalizers.includes(to)) {
        return finalizers.includes(from)
          ? setFinalizers(
              current,
              finalizers.filter((f) => f !== from),
            )
          : { status: 'unchanged', object: current };
      }
      if (isBeingDeleted(current)) return { status: 'deleting', object: current };
      if (!finalizers.includes(from)) return setFinalizers(current, [...finalizers, to]);
      return setFinalizers(
        current,
        finalizers.map((f) => (f === from ? to : f)),
      );
    });
  }

  /** Removes every one of `finalizers` the object carries, in one write. */
  remove<T extends KubeObject>(
    object: T,
    finalizers: readonly string[],
    context: PatchContext,
  ): Promise<FinalizerPatchOutcome<T>> {
    return this.#write('remove', finalizers.join(', '), object, context, (current) => {
      const all = finalizersOf(current);
      return all.some((f) => finalizers.includes(f))
        ? setFinalizers(
            current,
            all.filter((f) => !finalizers.includes(f)),
          )
        : { status: 'unchanged', object: current };
    });
  }

  /** The object as stored now, or undefined when it does not exist. */
  async read<T extends KubeObject>(object: T, context: PatchContext): Promise<T | undefined> {
    try {
      return (await this.#client.get(this.#type, objectKey(object), { signal: context.signal })) as T;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async #write<T extends KubeObject>(
    operation: 'add' | 'replace' | 'remove',
    finalizer: string,
    object: T,
    context: PatchContext,
    plan: (current: T) => Plan<T>,
  ): Promise<FinalizerPatchOutcome<T>> {
    const key = objectKey(object);
    const fail = (cause: unknown): FinalizerPatchError =>
      new FinalizerPatchError(operation, finalizer, key, { cause });
    let current = object;
    for (let attempt = 0; ; attempt++) {
      const ops = plan(current);
      if (!Array.isArray(ops)) return ops as FinalizerPatchOutcome<T>;
      try {
        const patched = await this.#client.patch(this.#type, key, { type: 'json', patch: ops });
        return { status: 'patched', object: patched as T };
      } catch (error) {
        if (isNotFound(error)) return { status: 'gone' };
        if (!isConflict(error) || attempt >= this.#conflictRetries) throw fail(error);
        context.logger.debug(
          { finalizer, operation, attempt },
          'Conflict writing a finalizer, reading the object again',
        );
      }
      await this.#clock.sleep(attempt * 1000 + Math.floor(this.#clock.random() * 500), context.signal);
      try {
        current = (await this.#client.get(this.#type, key, { signal: context.signal })) as T;
      } catch (error) {
        if (isNotFound(error)) return { status: 'gone' };
        throw fail(error);
      }
    }
  }
}

function finalizersOf(object: KubeObject): readonly string[] {
  return object.metadata.finalizers ?? [];
}

/**
 * The patch that sets the whole finalizer list, guarded by the resourceVersion it was computed
 * from (or, for an object without one, by a `test` of the list it replaces).
 */
function setFinalizers(current: KubeObject, finalizers: readonly string[]): JsonPatchOperation[] {
  const rv = current.metadata.resourceVersion;
  const guard: JsonPatchOperation[] = rv
    ? [{ op: 'replace', path: '/metadata/resourceVersion', value: rv }]
    : current.metadata.finalizers === undefined
      ? []
      : [{ op: 'test', path: '/metadata/finalizers', value: current.metadata.finalizers }];
  return [...guard, { op: 'add', path: '/metadata/finalizers', value: finalizers }];
}
