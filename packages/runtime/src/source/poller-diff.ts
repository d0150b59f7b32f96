import type { ObjectEvent } from '../event/index.ts';
import { requestKey } from '../object/index.ts';
import { DuplicateKeyError, ListFailedError } from './errors.ts';

/** What the poller remembers of an item: the object last handed out and its version. */
export interface Known<T> {
  readonly item: T;
  readonly version: string;
}

export interface Snapshot<T> {
  /** The new state, in list order. */
  readonly state: Map<string, Known<T>>;
  /** Creates and updates in list order, then deletes in the previous state's order. */
  readonly events: ObjectEvent<T>[];
}

export interface DiffOptions<T> {
  readonly source: string;
  readonly keyOf: (item: T) => string;
  readonly versionOf: ((item: T) => string) | undefined;
  /** Mark creates as part of the initial list. */
  readonly initial: boolean;
  /** Emit resync updates for unchanged items. */
  readonly resync: boolean;
}

/**
 * Diffs a list result against the previous state. Throws (and changes nothing) if the result is not
 * an array, a key or version is not a string, `keyOf`/`versionOf` throws, or two items share a key.
 * Every item is frozen (shallowly) before it can be handed out.
 */
export function diffSnapshot<T>(
  previous: ReadonlyMap<string, Known<T>>,
  items: unknown,
  options: DiffOptions<T>,
): Snapshot<T> {
  const { source, keyOf, versionOf, initial, resync } = options;
  if (!Array.isArray(items)) throw new ListFailedError(source, `expected an array, got ${typeof items}`);
  const state = new Map<string, Known<T>>();
  const changes: ObjectEvent<T>[] = [];
  for (const raw of items as readonly T[]) {
    const item = Object.freeze(raw);
    const key = call(source, 'keyOf', keyOf, item);
    if (state.has(key)) throw new DuplicateKeyError(source, key);
    const version =
      versionOf === undefined ? defaultVersion(source, item) : call(source, 'versionOf', versionOf, item);
    const known = previous.get(key);
    if (known === undefined) {
      state.set(key, { item, version });
      changes.push(
        initial ? { type: 'create', object: item, isInInitialList: true } : { type: 'create', object: item },
      );
    } else if (known.version !== version) {
      state.set(key, { item, version });
      changes.push({ type: 'update', oldObject: known.item, object: item });
    } else if (resync) {
      state.set(key, { item, version });
      changes.push({ type: 'update', oldObject: known.item, object: item, isResync: true });
    } else {
      state.set(key, known);
    }
  }
  for (const [key, known] of previous) {
    if (!state.has(key)) changes.push({ type: 'delete', object: known.item, finalStateUnknown: true });
  }
  return { state, events: changes };
}

function call<T>(source: string, what: string, fn: (item: T) => string, item: T): string {
  let value: unknown;
  try {
    value = fn(item);
  } catch (error) {
    throw new ListFailedError(source, `${what} threw`, { cause: error });
  }
  if (typeof value !== 'string')
    throw new ListFailedError(source, `${what} returned a ${typeof value}, not a string`);
  return value;
}

function defaultVersion(source: string, item: unknown): string {
  try {
    return requestKey(item);
  } catch (error) {
    throw new ListFailedError(source, 'item cannot be compared as JSON', { cause: error });
  }
}
