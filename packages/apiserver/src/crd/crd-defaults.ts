/**
 * The defaults kube-apiserver applies to a v1 CRD on decode, and the internal form its validation
 * works on: per-version `schema`, `subresources`, `additionalPrinterColumns` and `selectableFields`
 * that are identical in every version are validated once, at the top level (`spec.validation`,
 * `spec.subresources`, …), which is why kube reports schema errors of single-version CRDs under
 * `spec.validation.openAPIV3Schema`.
 */
import { defineKey, isObject, type JsonObject, jsonClone, jsonEqual, own } from './json.ts';
import type { CustomResourceDefinition } from './types.ts';

/**
 * A copy of `crd` with apiextensions v1's defaults: `names.singular` (lower-case kind),
 * `names.listKind` (kind + `List`), `conversion.strategy: None`, `status.storedVersions` (the
 * storage version). The input must be decodable (see {@link validateCrd}).
 *
 * @example
 * defaultCrd(crd).spec.names.listKind; // 'WebsiteList'
 */
export function defaultCrd<T extends CustomResourceDefinition>(crd: T): T {
  const out = withoutNulls(crd) as JsonObject;
  if (!isObject(out.spec)) out.spec = {};
  const spec = out.spec as JsonObject;
  if (!isObject(spec.names)) spec.names = {};
  const names = spec.names as JsonObject;
  const kind = typeof names.kind === 'string' ? names.kind : '';
  if (typeof names.singular !== 'string' || names.singular === '') names.singular = kind.toLowerCase();
  if ((typeof names.listKind !== 'string' || names.listKind === '') && kind !== '')
    names.listKind = `${kind}List`;
  if (!isObject(spec.conversion)) spec.conversion = { strategy: 'None' };
  const status = isObject(out.status) ? out.status : undefined;
  const stored = status === undefined ? undefined : own(status, 'storedVersions');
  if (!Array.isArray(stored) || stored.length === 0) {
    const storage = versionsOf(spec).find((v) => v.storage === true);
    if (storage !== undefined && typeof storage.name === 'string') {
      out.status = { ...(status ?? {}), storedVersions: [storage.name] };
    }
  }
  return out as unknown as T;
}

/**
 * A copy without `null` members, which Go's decoder reads as zero values (schemas are copied as
 * they are: there `null` can be data, as in `enum: [null]`).
 */
export function withoutNulls(value: unknown, key = ''): unknown {
  if (key === 'openAPIV3Schema') return jsonClone(value);
  if (Array.isArray(value)) return value.map((v) => withoutNulls(v));
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value))
    if (v !== null && v !== undefined) defineKey(out, k, withoutNulls(v, k));
  return out;
}

/** The versions of a spec that are objects. */
export function versionsOf(spec: JsonObject): JsonObject[] {
  const versions = own(spec, 'versions');
  return Array.isArray(versions) ? versions.map((v: unknown) => (isObject(v) ? v : {})) : [];
}

/** The internal (validation) view of a CRD spec. */
export interface InternalSpec {
  readonly spec: JsonObject;
  readonly versions: readonly JsonObject[];
  /** Top-level `{ openAPIV3Schema }` when identical in all versions. */
  readonly validation: unknown;
  readonly subresources: unknown;
  readonly columns: unknown;
  readonly selectableFields: unknown;
  /** Which per-version fields were identical (and so validated at the top level). */
  readonly identical: {
    readonly schema: boolean;
    readonly subresources: boolean;
    readonly columns: boolean;
    readonly selectableFields: boolean;
  };
}

/** apimachinery's semantic equality of lists: nil and empty are equal. */
function listEqual(a: unknown, b: unknown): boolean {
  return jsonEqual(Array.isArray(a) ? a : [], Array.isArray(b) ? b : []);
}

function identical(versions: readonly JsonObject[], key: string, listLike: boolean): boolean {
  const first = versions[0] === undefined ? undefined : own(versions[0], key);
  return versions.every((v) => {
    const value = own(v, key);
    return listLike ? listEqual(value, first) : jsonEqual(value ?? null, first ?? null);
  });
}

/** kube's v1 → internal conversion of the fields validation looks at. */
export function internalSpec(spec: JsonObject): InternalSpec {
  const versions = versionsOf(spec);
  if (versions.length === 0) {
    return {
      spec,
      versions,
      validation: undefined,
      subresources: undefined,
      columns: undefined,
      selectableFields: undefined,
      identical: { schema: false, subresources: false, columns: false, selectableFields: false },
    };
  }
  const first = versions[0] as JsonObject;
  const same = {
    schema: identical(versions, 'schema', false),
    subresources: identical(versions, 'subresources', false),
    columns: identical(versions, 'additionalPrinterColumns', true),
    selectableFields: identical(versions, 'selectableFields', true),
  };
  return {
    spec,
    versions,
    validation: same.schema ? own(first, 'schema') : undefined,
    subresources: same.subresources ? own(first, 'subresources') : undefined,
    columns: same.columns ? own(first, 'additionalPrinterColumns') : undefined,
    selectableFields: same.selectableFields ? own(first, 'selectableFields') : undefined,
    identical: same,
  };
}

/** The subresources that apply to a version (top-level ones when identical). */
export function subresourcesFor(internal: InternalSpec, version: JsonObject): unknown {
  return internal.identical.subresources ? internal.subresources : own(version, 'subresources');
}

/** True if any version enables the status subresource. */
export function anyStatusEnabled(internal: InternalSpec): boolean {
  const hasStatus = (s: unknown): boolean => isObject(s) && isObject(own(s, 'status'));
  return hasStatus(internal.subresources) || internal.versions.some((v) => hasStatus(own(v, 'subresources')));
}
