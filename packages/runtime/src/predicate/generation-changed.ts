import type { KubeObject } from '../object/index.ts';
import type { Predicate } from './predicate.ts';

/**
 * Lets an update through only when `metadata.generation` changed, which filters status-only writes,
 * metadata-only writes and resyncs (controller-runtime's `GenerationChangedPredicate`). Creates,
 * deletes and generic events always pass.
 *
 * Updates whose new object has generation 0 or none also pass (grafana's opinionated watcher): such
 * kinds do not track generation (ConfigMaps, objects from non-Kubernetes backends), so the predicate
 * cannot tell a spec change from a status change, and a lost reconcile is worse than an extra one.
 * controller-runtime filters them, which silently drops every update for those kinds.
 *
 * @example
 * const source = fromEventSource(informer, enqueueForObject(), generationChanged());
 */
export function generationChanged<T extends Pick<KubeObject, 'metadata'>>(): Predicate<T> {
  return (event) => {
    if (event.type !== 'update') return true;
    const generation = event.object.metadata.generation;
    if (generation === undefined || generation === 0) return true;
    return event.oldObject.metadata.generation !== generation;
  };
}
