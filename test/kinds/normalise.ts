/**
 * What a CRD looks like after `importCrd` → `defineKind` → `crdsOf` (docs/guide/kinds.md,
 * "What the round trip normalises"): the comparison in the round-trip tests applies these rules to
 * the original CRD, and nothing else.
 */
type Json = Record<string, unknown>;

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const PRESERVE = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

/** A schema node as `defineKind` writes it back. */
function node(schema: unknown): unknown {
  if (!isJson(schema)) return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'properties' && isJson(v)) {
      // An empty `properties` says nothing; it is left out.
      if (Object.keys(v).length > 0)
        out[k] = Object.fromEntries(Object.entries(v).map(([n, p]) => [n, node(p)]));
    } else if (k === 'items' || k === 'additionalProperties' || k === 'not') out[k] = node(v);
    else if ((k === 'allOf' || k === 'oneOf' || k === 'anyOf') && Array.isArray(v)) out[k] = v.map(node);
    // false is the default of these flags.
    else if ((k === 'uniqueItems' || k === 'exclusiveMinimum' || k === 'exclusiveMaximum') && v === false)
      continue;
    else out[k] = v;
  }
  // int-or-string gets kubebuilder's anyOf.
  if (out['x-kubernetes-int-or-string'] === true) out.anyOf = [{ type: 'integer' }, { type: 'string' }];
  return out;
}

function version(v: Json): Json {
  const subresources: Json = isJson(v.subresources) ? { ...v.subresources } : {};
  const root: Json =
    isJson(v.schema) && isJson(v.schema.openAPIV3Schema) ? v.schema.openAPIV3Schema : { ...PRESERVE };
  const properties: Json = isJson(root.properties) ? root.properties : {};
  const spec = properties.spec ?? PRESERVE;
  const status = properties.status ?? (subresources.status !== undefined ? PRESERVE : undefined);
  // A status schema makes status a subresource.
  if (status !== undefined) subresources.status = {};
  const out: Json = {
    name: v.name,
    served: v.served ?? true,
    storage: v.storage ?? true,
    ...(v.deprecated === true ? { deprecated: true } : {}),
    ...(v.deprecationWarning === undefined ? {} : { deprecationWarning: v.deprecationWarning }),
    ...(Object.keys(subresources).length === 0 ? {} : { subresources }),
    ...(Array.isArray(v.additionalPrinterColumns) && v.additionalPrinterColumns.length > 0
      ? { additionalPrinterColumns: v.additionalPrinterColumns }
      : {}),
    schema: {
      openAPIV3Schema: {
        type: 'object',
        ...(root.description === undefined ? {} : { description: root.description }),
        // apiVersion, kind and metadata are always declared, without descriptions; spec is required.
        properties: {
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          metadata: { type: 'object' },
          spec: node(spec),
          ...(status === undefined ? {} : { status: node(status) }),
        },
        required: ['spec'],
        ...(Array.isArray(root['x-kubernetes-validations']) && root['x-kubernetes-validations'].length > 0
          ? { 'x-kubernetes-validations': root['x-kubernetes-validations'] }
          : {}),
      },
    },
  };
  return out;
}

/** The CRD as the round trip gives it back: name, group, names (listKind = kind + List), scope, versions. */
export function normaliseCrd(crd: unknown): Json {
  const c = crd as Json;
  const spec = c.spec as Json;
  const names = spec.names as Json;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: (c.metadata as Json).name },
    spec: {
      group: spec.group,
      names: {
        plural: names.plural,
        singular: names.singular ?? String(names.kind).toLowerCase(),
        kind: names.kind,
        listKind: `${String(names.kind)}List`,
        ...(Array.isArray(names.shortNames) && names.shortNames.length > 0
          ? { shortNames: names.shortNames }
          : {}),
        ...(Array.isArray(names.categories) && names.categories.length > 0
          ? { categories: names.categories }
          : {}),
      },
      scope: spec.scope,
      versions: (spec.versions as Json[]).map(version),
    },
  };
}
