import type { KubeObject, ResourceType, WatchEvent } from '@converge/runtime';
import type { Store } from '@converge/store';

type ObjectEvent = Extract<WatchEvent, { object: KubeObject }>;

function keyOf(object: KubeObject): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;
}

/**
 * Applies a selector on kind-specific fields to a watch the store filters only by labels and
 * `metadata.*`, keeping the cacher's semantics: an object entering the selection is ADDED, one
 * staying MODIFIED, one leaving DELETED (with its previous state at the new resourceVersion). It
 * remembers which objects are selected; a watch from resourceVersion N learns them from the list
 * at exactly N.
 */
export class WatchFieldFilter {
  readonly #matches: (object: KubeObject) => boolean;
  readonly #selected = new Map<string, KubeObject>();

  constructor(matches: (object: KubeObject) => boolean) {
    this.#matches = matches;
  }

  /**
   * Learns the selected objects as of `resourceVersion` (best effort: an expired one is skipped),
   * matched as `served` gives them (default: as stored).
   */
  async seed(
    store: Store,
    type: ResourceType,
    options: { namespace: string; labelSelector: string; shardSelector?: string },
    resourceVersion: string,
    served?: (objects: readonly KubeObject[]) => Promise<readonly KubeObject[]>,
  ): Promise<void> {
    try {
      const page = await store.list(type, { ...options, resourceVersion, resourceVersionMatch: 'Exact' });
      const objects = served === undefined ? page.items : await served(page.items);
      for (const object of objects) if (this.#matches(object)) this.#selected.set(keyOf(object), object);
    } catch {
      // Past the history window: objects are learnt as they change.
    }
  }

  /** The event a client should see for a store event, or undefined. */
  convert(event: ObjectEvent): ObjectEvent | undefined {
    const key = keyOf(event.object);
    const was = this.#selected.get(key);
    if (event.type === 'DELETED') {
      this.#selected.delete(key);
      return was === undefined ? undefined : event;
    }
    if (this.#matches(event.object)) {
      this.#selected.set(key, event.object);
      return { type: was === undefined ? 'ADDED' : 'MODIFIED', object: event.object };
    }
    if (was === undefined) return undefined;
    this.#selected.delete(key);
    const left = {
      ...was,
      metadata: { ...was.metadata, resourceVersion: event.object.metadata.resourceVersion },
    } as KubeObject;
    return { type: 'DELETED', object: left };
  }
}
