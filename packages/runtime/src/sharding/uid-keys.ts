import type { CacheReader } from '../cache/index.ts';
import type { EventHandler } from '../handler/index.ts';
import { type KubeObject, keyToString, type ObjectKey } from '../object/index.ts';
import { UNOWNED_SHARD_KEY, uidShardKey } from './slots.ts';

/** How many deleted objects' uids a controller remembers for their last reconcile. */
const TOMBSTONES = 4096;

/**
 * The shard keys of a controller's requests under uid sharding (`by: 'uid'`): a request's key is
 * the uid slot of its primary object, read from the primary's (sharded) cache, or for an object
 * just deleted from a tombstone its delete event left. A request whose object is in neither is
 * owned by nobody ({@link UNOWNED_SHARD_KEY}): the object is outside this replica's share, so the
 * replica that caches it runs it. The builder wires it; `handler` wraps the primary's handler so
 * that tombstones are written before the request is queued.
 *
 * @internal
 */
export class UidShardKeys {
  readonly #cache: CacheReader<KubeObject>;
  /** `namespace/name` → uid of objects deleted lately, oldest first (bounded). */
  readonly #tombstones = new Map<string, string>();

  constructor(cache: CacheReader<KubeObject>) {
    this.#cache = cache;
  }

  /** The shard key of `request`. */
  readonly keyOf = (request: ObjectKey): string => {
    const uid = this.#cache.get(request)?.metadata.uid ?? this.#tombstones.get(keyToString(request));
    return typeof uid === 'string' && uid !== '' ? uidShardKey(uid) : UNOWNED_SHARD_KEY;
  };

  /** `inner`, remembering the uid of every object deleted before `inner` queues its request. */
  handler(inner: EventHandler<KubeObject, ObjectKey>): EventHandler<KubeObject, ObjectKey> {
    return {
      handle: (event, queue) => {
        const metadata = event.object.metadata;
        const key = keyToString({ namespace: metadata.namespace ?? '', name: metadata.name ?? '' });
        if (event.type === 'delete' && typeof metadata.uid === 'string') {
          this.#tombstones.delete(key);
          this.#tombstones.set(key, metadata.uid);
          if (this.#tombstones.size > TOMBSTONES) {
            const oldest = this.#tombstones.keys().next().value;
            if (oldest !== undefined) this.#tombstones.delete(oldest);
          }
        } else if (event.type === 'create') {
          this.#tombstones.delete(key);
        }
        inner.handle(event, queue);
      },
    };
  }
}
