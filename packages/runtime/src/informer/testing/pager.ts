import { ExpiredError, type ListOptions, TimeoutError } from '../../backend/index.ts';
import { objectSelector } from '../../selector/index.ts';
import type { Stored, VersionedObjects } from './versioned-objects.ts';

/** One page of stored objects (an `ObjectList` before decoding). */
export interface StoredPage {
  readonly items: readonly Stored[];
  readonly resourceVersion: string;
  readonly continue?: string;
  readonly remainingItemCount?: number;
}

interface Snapshot {
  readonly revision: number;
  readonly items: readonly Stored[];
}

/**
 * The fake backend's paginated lists: the first page takes a snapshot of the selected objects at
 * the current revision, and every `continue` token (`id:offset`) pages through that snapshot, so
 * writes between pages never show. A token whose snapshot is older than the compacted history
 * expires; a `resourceVersion` ahead of the backend times out, as on an API server.
 */
export class Pager {
  readonly #snapshots = new Map<string, Snapshot>();
  #ids = 0;

  page(data: VersionedObjects, typeId: string, options: ListOptions): StoredPage {
    const id = options.continue?.split(':')[0];
    const snapshot = id === undefined ? this.#take(data, typeId, options) : this.#resume(data, id);
    const offset = options.continue === undefined ? 0 : Number(options.continue.split(':')[1]);
    const limit = options.limit !== undefined && options.limit > 0 ? options.limit : Number.POSITIVE_INFINITY;
    const end = Math.min(offset + limit, snapshot.items.length);
    const items = snapshot.items.slice(offset, end);
    const resourceVersion = String(snapshot.revision);
    if (end >= snapshot.items.length) {
      if (id !== undefined) this.#snapshots.delete(id);
      return { items, resourceVersion };
    }
    const next = id ?? String(++this.#ids);
    this.#snapshots.set(next, snapshot);
    return {
      items,
      resourceVersion,
      continue: `${next}:${end}`,
      remainingItemCount: snapshot.items.length - end,
    };
  }

  #resume(data: VersionedObjects, id: string): Snapshot {
    const snapshot = this.#snapshots.get(id);
    if (snapshot === undefined || snapshot.revision < data.compacted) {
      this.#snapshots.delete(id);
      throw new ExpiredError('the continue token is too old; list again without it');
    }
    return snapshot;
  }

  #take(data: VersionedObjects, typeId: string, options: ListOptions): Snapshot {
    const requested = options.resourceVersion;
    if (
      requested !== undefined &&
      requested !== '' &&
      requested !== '0' &&
      Number(requested) > data.revision
    ) {
      throw new TimeoutError(`too large resource version: ${requested}, current: ${data.revision}`);
    }
    const selects = objectSelector(options);
    return { revision: data.revision, items: data.list(typeId).filter((stored) => selects(stored.object)) };
  }
}
