import type { KubeObject, WatchEvent } from '@converge/runtime';
import type { StoredEvent } from './event-log.ts';
import { deepFreeze, withMutableMeta } from './json.ts';
import type { Matcher } from './selection.ts';

/** The previous state of an object that left a selector, with the revision of the write that moved it. */
const exits = new WeakMap<StoredEvent, KubeObject>();

function exitState(event: StoredEvent): KubeObject {
  let object = exits.get(event);
  if (object === undefined) {
    const copy = withMutableMeta(event.prev as KubeObject);
    copy.metadata.resourceVersion = String(event.revision);
    object = deepFreeze(copy) as unknown as KubeObject;
    exits.set(event, object);
  }
  return object;
}

/**
 * What one stored event looks like to a watch with key range `[lo, hi)` and a selector, judged on
 * the old and the new state (as the apiserver's cacher does): entering the selection is ADDED,
 * staying MODIFIED, leaving DELETED carrying the previous state at the new revision; a real delete
 * of a selected object is DELETED with its last state; anything else is not seen (undefined).
 */
export function convertEvent(
  event: StoredEvent,
  lo: string,
  hi: string | undefined,
  matcher: Matcher,
): WatchEvent | undefined {
  if (event.key < lo || (hi !== undefined && event.key >= hi)) return undefined;
  const before = event.prev !== undefined && (matcher === undefined || matcher(event.prev));
  if (event.type === 'DELETED') return before ? { type: 'DELETED', object: event.object } : undefined;
  if (matcher === undefined || matcher(event.object)) {
    return { type: before ? 'MODIFIED' : 'ADDED', object: event.object };
  }
  return before ? { type: 'DELETED', object: exitState(event) } : undefined;
}
