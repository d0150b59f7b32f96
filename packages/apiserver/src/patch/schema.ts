import { hasOwn, type JsonObject, type JsonScalar } from './json.ts';

/**
 * Patch metadata of one node of an object: how strategic merge patch (`x-kubernetes-patch-strategy`,
 * `x-kubernetes-patch-merge-key`) and server-side apply (`x-kubernetes-list-type`,
 * `x-kubernetes-list-map-keys`, `x-kubernetes-map-type`) treat it. The root of a kind is a
 * {@link StructSchema}.
 *
 * Only nodes that need more than the defaults are described. The defaults: an object is an open
 * struct (patched and applied field by field), a list is replaced by a strategic merge patch and is
 * atomic for server-side apply, anything else is a leaf.
 *
 * @example
 * const configMap: PatchSchema = { type: 'struct', fields: { metadata: objectMeta, data: { type: 'map' } } };
 */
export type PatchSchema = StructSchema | MapSchema | ListSchema;

/** An object with named fields (a Go struct). Fields not listed take the defaults. */
export interface StructSchema {
  readonly type: 'struct';
  readonly fields?: Readonly<Record<string, PatchSchema>>;
  /** Server-side apply owns and replaces it as a whole (`+structType=atomic`). */
  readonly atomic?: boolean;
}

/** An object with arbitrary keys (labels, annotations, ConfigMap data). */
export interface MapSchema {
  readonly type: 'map';
  /** The schema of every value. */
  readonly values?: PatchSchema;
  /** Server-side apply owns and replaces it as a whole (`+mapType=atomic`). */
  readonly atomic?: boolean;
}

/** A list. */
export interface ListSchema {
  readonly type: 'list';
  /**
   * Strategic merge patch: `merge` merges lists of objects by {@link patchMergeKey} and unions lists
   * of primitives; `replace` (the default) replaces the list.
   */
  readonly patchStrategy?: 'merge' | 'replace';
  /** Strategic merge patch: the field identifying an element of a merged list of objects. */
  readonly patchMergeKey?: string;
  /**
   * Server-side apply: `atomic` (the default) is owned and replaced as a whole, `set` is a set of
   * primitives owned element by element, `map` is a list of objects keyed by {@link listMapKeys}.
   */
  readonly listType?: 'atomic' | 'set' | 'map';
  /** Server-side apply: the fields that identify an element of a `map` list. */
  readonly listMapKeys?: readonly string[];
  /** Defaults of key fields an element may omit (a container port's `protocol` is `TCP`). */
  readonly keyDefaults?: Readonly<Record<string, JsonScalar>>;
  /** The schema of every element. */
  readonly items?: PatchSchema;
}

/** The schema of member `key` of an object whose schema is `schema`, if described. */
export function memberSchema(schema: PatchSchema | undefined, key: string): PatchSchema | undefined {
  if (schema === undefined) return undefined;
  if (schema.type === 'map') return schema.values;
  if (schema.type === 'struct' && schema.fields !== undefined && hasOwn(schema.fields as JsonObject, key)) {
    return schema.fields[key];
  }
  return undefined;
}

/** The list schema of a node, if it is described as a list. */
export function asList(schema: PatchSchema | undefined): ListSchema | undefined {
  return schema?.type === 'list' ? schema : undefined;
}

/** True if server-side apply treats an object node as one value. */
export function isAtomicObject(schema: PatchSchema | undefined): boolean {
  return (schema?.type === 'struct' || schema?.type === 'map') && schema.atomic === true;
}

/**
 * True if a member of an object with this schema is a map key rather than a named field. Server-side
 * apply owns map keys as such; named fields are owned only through their leaves.
 */
export function isMapSchema(schema: PatchSchema | undefined): boolean {
  return schema?.type === 'map';
}
