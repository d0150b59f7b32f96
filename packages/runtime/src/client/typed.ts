import type { KubeObjectLike, ResourceType } from '../backend/index.ts';
import type { KubeObject } from '../object/index.ts';

/** Any resource type, whatever the shape of its objects. */
export type AnyResourceType = ResourceType<KubeObjectLike>;

/**
 * `ResourceType<S>` when it names no object shape of its own (a plain `ResourceType`), never
 * otherwise: lets an overload take the shape from the object for plain types only, so a typed
 * type's shape is always checked.
 */
export type UntypedResourceType<S extends KubeObjectLike> = KubeObject extends S ? ResourceType<S> : never;

/** The same type, seen as serving {@link KubeObject}s: what backends and caches take. */
export function untyped(type: AnyResourceType): ResourceType {
  return type as ResourceType;
}
