import { type KubeObject, type PartialObjectMetadata, toPartialObjectMetadata } from '../object/index.ts';
import type { ObjectList, WatchEvent } from './backend.ts';
import { apiVersionOf, type ResourceType } from './resource-type.ts';

/**
 * The projection of a metadata-only read of `type`: each object to `{ apiVersion, kind, metadata }`
 * with the type's apiVersion and kind (see {@link toPartialObjectMetadata}: nothing is copied, an
 * object already in that shape is returned as it is). For backends that cannot reduce what travels.
 *
 * @example
 * const project = metadataProjection(podType);
 * const partial = project(pod); // { apiVersion: 'v1', kind: 'Pod', metadata: pod.metadata }
 */
export function metadataProjection(
  type: Pick<ResourceType, 'group' | 'version' | 'kind'>,
): (object: KubeObject) => PartialObjectMetadata {
  const apiVersion = apiVersionOf(type);
  const { kind } = type;
  return (object) => toPartialObjectMetadata(object, apiVersion, kind);
}

/**
 * A list page with every item projected to its metadata (see {@link metadataProjection}).
 *
 * @example
 * return options.metadataOnly === true ? metadataOnlyList(type, page) : page;
 */
export function metadataOnlyList<T extends KubeObject>(
  type: Pick<ResourceType, 'group' | 'version' | 'kind'>,
  page: ObjectList<KubeObject>,
): ObjectList<T> {
  const project = metadataProjection(type);
  return { ...page, items: page.items.map(project) as unknown as T[] };
}

/**
 * A watch whose ADDED, MODIFIED and DELETED objects are projected to their metadata (bookmarks
 * pass as they are); ending it ends `events`.
 *
 * @example
 * return options.metadataOnly === true ? metadataOnlyEvents(type, events) : events;
 */
export function metadataOnlyEvents<T extends KubeObject>(
  type: Pick<ResourceType, 'group' | 'version' | 'kind'>,
  events: AsyncIterable<WatchEvent<KubeObject>>,
): AsyncIterable<WatchEvent<T>> {
  // Made at the first object: a bad type surfaces from the iteration, as every watch error does.
  let project: ((object: KubeObject) => PartialObjectMetadata) | undefined;
  return {
    [Symbol.asyncIterator]: () => {
      const inner = events[Symbol.asyncIterator]();
      const map = (result: IteratorResult<WatchEvent<KubeObject>>): IteratorResult<WatchEvent<T>> => {
        if (result.done === true) return result as IteratorResult<WatchEvent<T>>;
        const event = result.value;
        if (event.type === 'BOOKMARK') return result as IteratorResult<WatchEvent<T>>;
        project ??= metadataProjection(type);
        const object = project(event.object) as unknown as T;
        return { done: false, value: { ...event, object } };
      };
      return {
        next: async () => map(await inner.next()),
        return: async (value?: unknown) => {
          const result = await inner.return?.(value);
          return (result ?? { done: true, value: undefined }) as IteratorResult<WatchEvent<T>>;
        },
        ...(inner.throw === undefined
          ? {}
          : {
              throw: async (error?: unknown) =>
                map(await (inner.throw as NonNullable<typeof inner.throw>)(error)),
            }),
      };
    },
  };
}
