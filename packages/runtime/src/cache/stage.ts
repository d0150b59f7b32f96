import type { KubeObject } from '../object/index.ts';
import { checkObject } from './check-object.ts';
import type { CacheCore } from './core.ts';
import { deepFreeze } from './deep-freeze.ts';
import { StageFinishedError } from './errors.ts';
import type { Store } from './store.ts';

/** An object of a replace that changed: what the cache held and what it holds now. */
export interface ReplacedObject<T> {
  readonly oldObject: T;
  readonly object: T;
}

/**
 * What a replace (relist) changed, client-go `Replace` semantics: objects new to the cache, objects
 * whose resourceVersion changed, and objects that are gone (with the state the cache held, since
 * their final state was never seen). Objects with an unchanged resourceVersion are only counted.
 */
export interface ReplaceResult<T> {
  readonly created: readonly T[];
  readonly updated: readonly ReplacedObject<T>[];
  readonly deleted: readonly T[];
  readonly unchanged: number;
}

/**
 * A replace being built: add the objects of a list page by page, then `commit` swaps them in at
 * once, or `discard` drops them (the list failed). Readers see the old contents until the commit.
 *
 * Only what changed costs memory while a relist runs: an added object whose resourceVersion equals
 * the cached one's is dropped for the cached (already frozen) object, so during a relist the cache
 * holds the old objects plus the changed ones, never two full copies. The diff is worked out as
 * objects are added, so the commit itself only looks for the objects that are gone.
 *
 * @example
 * const stage = writer.stage();
 * for (const item of page.items) stage.add(item);
 * const { created, updated, deleted } = stage.commit(page.resourceVersion);
 */
export interface CacheStage<T extends KubeObject = KubeObject> {
  /** Objects staged so far. */
  readonly size: number;
  /** Stages `object` (the last of two with one key wins); returns the frozen object that will be cached. */
  add(object: T): T;
  /** Swaps the staged objects in, sets the resourceVersion, and reports what changed. */
  commit(resourceVersion: string): ReplaceResult<T>;
  /** Drops the staged objects; the cache is unchanged. */
  discard(): void;
}

interface Diff<T> {
  readonly created: T[];
  readonly updated: ReplacedObject<T>[];
  unchanged: number;
}

type StageState<T extends KubeObject> =
  | {
      readonly kind: 'open';
      readonly store: Store<T>;
      /** The cache contents the diff so far is relative to, and its write count then. */
      readonly base: Store<T>;
      readonly baseWrites: number;
      readonly diff: Diff<T>;
      /** False once a key was staged twice: the running diff no longer holds. */
      exact: boolean;
    }
  | { readonly kind: 'finished' };

/** A {@link CacheStage} over a {@link CacheCore}; it builds a fresh store and swaps it in. */
export class CoreStage<T extends KubeObject> implements CacheStage<T> {
  readonly #core: CacheCore<T>;
  #state: StageState<T>;

  constructor(core: CacheCore<T>) {
    this.#core = core;
    this.#state = {
      kind: 'open',
      store: core.newStore(),
      base: core.store,
      baseWrites: core.writes,
      diff: { created: [], updated: [], unchanged: 0 },
      exact: true,
    };
  }

  get size(): number {
    return this.#state.kind === 'open' ? this.#state.store.size : 0;
  }

  add(object: T): T {
    const state = this.#open();
    const { namespace, name } = checkObject(this.#core.name, object);
    const cached = state.base.get(namespace, name);
    const version = object.metadata.resourceVersion;
    const kept =
      cached !== undefined &&
      version !== undefined &&
      version !== '' &&
      cached.metadata.resourceVersion === version
        ? cached
        : deepFreeze(object);
    if (state.store.putAt(namespace, name, kept) !== undefined) state.exact = false;
    else if (cached === undefined) state.diff.created.push(kept);
    else if (cached === kept) state.diff.unchanged++;
    else state.diff.updated.push({ oldObject: cached, object: kept });
    return kept;
  }

  commit(resourceVersion: string): ReplaceResult<T> {
    const state = this.#open();
    const core = this.#core;
    core.assertOpen('commit a replace');
    this.#state = { kind: 'finished' };
    const next = state.store;
    next.ensureIndexes(core.indexes);
    const previous = core.store;
    const current = state.exact && previous === state.base && core.writes === state.baseWrites;
    const { created, updated, unchanged } = current ? state.diff : diffStores(previous, next);
    const deleted: T[] = [];
    previous.forEach((old) => {
      if (next.get(old.metadata.namespace ?? '', old.metadata.name as string) === undefined)
        deleted.push(old);
    });
    core.store = next;
    core.resourceVersion = resourceVersion;
    return { created, updated, deleted, unchanged };
  }

  discard(): void {
    this.#open();
    this.#state = { kind: 'finished' };
  }

  #open(): Extract<StageState<T>, { kind: 'open' }> {
    if (this.#state.kind !== 'open') throw new StageFinishedError(this.#core.name);
    return this.#state;
  }
}

/** The creates, updates and unchanged objects of `next` against `previous`, worked out afresh. */
function diffStores<T extends KubeObject>(previous: Store<T>, next: Store<T>): Diff<T> {
  const diff: Diff<T> = { created: [], updated: [], unchanged: 0 };
  next.forEach((object) => {
    const old = previous.get(object.metadata.namespace ?? '', object.metadata.name as string);
    if (old === undefined) diff.created.push(object);
    else if (old === object) diff.unchanged++;
    else diff.updated.push({ oldObject: old, object });
  });
  return diff;
}
