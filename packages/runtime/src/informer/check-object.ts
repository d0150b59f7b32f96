import { apiVersionOf, type ResourceType } from '../backend/index.ts';

/** Says why an object cannot be cached, or undefined when it can. */
export type ObjectCheck = (object: unknown) => string | undefined;

/**
 * The check an informer of `type` scoped to `namespace` ('' = all) runs on every object from a
 * list or watch: it must be an object with a non-empty `metadata.name`, string `namespace` /
 * `resourceVersion` if present, the informer's kind and apiVersion if it names them (list items
 * often do not), and lie in the informer's namespace. Built once per informer: it runs per object.
 */
export function objectCheck(type: ResourceType, namespace: string): ObjectCheck {
  const kind = type.kind;
  const apiVersion = apiVersionOf(type);
  return (object) => {
    if (typeof object !== 'object' || object === null || Array.isArray(object))
      return 'the object is not an object';
    const o = object as { kind?: unknown; apiVersion?: unknown; metadata?: unknown };
    const meta = o.metadata as
      | { name?: unknown; namespace?: unknown; resourceVersion?: unknown }
      | null
      | undefined;
    if (typeof meta !== 'object' || meta === null) return 'the object has no metadata';
    if (typeof meta.name !== 'string' || meta.name === '') return 'the object has no metadata.name';
    const ns = meta.namespace;
    if (ns !== undefined && typeof ns !== 'string') return 'metadata.namespace is not a string';
    if (meta.resourceVersion !== undefined && typeof meta.resourceVersion !== 'string') {
      return 'metadata.resourceVersion is not a string';
    }
    if (o.kind !== undefined && o.kind !== kind) return `kind ${String(o.kind)} is not ${kind}`;
    if (o.apiVersion !== undefined && o.apiVersion !== apiVersion) {
      return `apiVersion ${String(o.apiVersion)} is not ${apiVersion}`;
    }
    if (namespace !== '' && (ns ?? '') !== namespace) {
      return `namespace ${JSON.stringify(ns ?? '')} is outside the informer's namespace ${JSON.stringify(namespace)}`;
    }
    return undefined;
  };
}

const EVENT_TYPES: ReadonlySet<unknown> = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK']);

/** Why a watch event is unusable before its object is looked at (bad shape or type), or undefined. */
export function eventProblem(event: unknown): string | undefined {
  if (typeof event !== 'object' || event === null) return 'the event is not an object';
  const { type, resourceVersion } = event as { type?: unknown; resourceVersion?: unknown };
  if (!EVENT_TYPES.has(type)) return `unknown event type ${String(type)}`;
  if (type === 'BOOKMARK' && typeof resourceVersion !== 'string')
    return 'a bookmark without a resourceVersion';
  return undefined;
}
