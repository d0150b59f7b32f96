/**
 * The `/openapi/v3/apis/<group>/<version>` document of custom resources, shaped as kube-apiserver's
 * CRD OpenAPI builder makes it: a component schema per kind (with `x-kubernetes-group-version-kind`)
 * and list kind, and the REST paths with their operations. Every PATCH carries the GVK extension and
 * a `fieldValidation` query parameter, which is what `kubectl apply` looks for before sending
 * `fieldValidation=Strict`; `kubectl explain` reads the component schemas.
 */
import { type CrdInfo, type CrdVersionInfo, checkedCrd, crdInfo } from './crd-info.ts';
import { SCHEMA_KEYS } from './decode.ts';
import { CrdVersionNotFoundError } from './errors.ts';
import { isObject, type JsonObject, own } from './json.ts';
import {
  META_SCHEMAS,
  METADATA_DESCRIPTION,
  metaComponents,
  ref,
  refWith,
  SCALE_SCHEMA,
  TYPE_META,
} from './openapi-meta.ts';
import { operationsFor } from './openapi-paths.ts';
import type { CustomResourceDefinition } from './types.ts';

/** kube's model name of a GVK: the group reversed (`com.example.v1.Website`). */
export function modelName(group: string, version: string, kind: string): string {
  return `${group.split('.').reverse().join('.')}.${version}.${kind}`;
}

const SKIPPED = new Set([
  'id',
  '$schema',
  '$ref',
  'definitions',
  'patternProperties',
  'dependencies',
  'additionalItems',
]);
const INT_OR_STRING = [{ type: 'integer' }, { type: 'string' }];

/** `Structural.Unfold` + `ToKubeOpenAPI` of a CRD schema node. */
function toOpenApi(schema: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (!SCHEMA_KEYS.has(key) || SKIPPED.has(key) || value === null || value === undefined) continue;
    if (key === 'x-kubernetes-preserve-unknown-fields' && value !== true) continue;
    if ((key === 'properties' || key === 'definitions') && isObject(value)) {
      out[key] = Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, isObject(v) ? toOpenApi(v) : v]),
      );
    } else if ((key === 'items' || key === 'not' || key === 'additionalProperties') && isObject(value)) {
      out[key] = toOpenApi(value);
    } else if ((key === 'allOf' || key === 'anyOf' || key === 'oneOf') && Array.isArray(value)) {
      out[key] = value.map((v: unknown) => (isObject(v) ? toOpenApi(v) : v));
    } else {
      out[key] = value;
    }
  }
  if (schema['x-kubernetes-int-or-string'] === true) {
    const anyOf = own(schema, 'anyOf');
    const allOf = own(schema, 'allOf');
    const firstAllOf = Array.isArray(allOf) && isObject(allOf[0]) ? own(allOf[0], 'anyOf') : undefined;
    const patterned =
      JSON.stringify(anyOf) === JSON.stringify(INT_OR_STRING) ||
      JSON.stringify(firstAllOf) === JSON.stringify(INT_OR_STRING);
    if (!patterned) {
      if (anyOf === undefined) out.anyOf = INT_OR_STRING;
      else out.allOf = [{ anyOf: INT_OR_STRING }, ...(Array.isArray(out.allOf) ? out.allOf : [])];
    }
  }
  return out;
}

function addEmbedded(schema: JsonObject): void {
  const props = own(schema, 'properties');
  if (isObject(props)) for (const p of Object.values(props)) if (isObject(p)) addEmbedded(p);
  if (isObject(schema.items)) addEmbedded(schema.items);
  if (isObject(schema.additionalProperties)) addEmbedded(schema.additionalProperties);
  if (schema['x-kubernetes-embedded-resource'] !== true) return;
  schema.properties = {
    ...(isObject(props) ? props : {}),
    apiVersion: {
      ...TYPE_META.apiVersion,
      description:
        'apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
    },
    kind: {
      ...TYPE_META.kind,
      description:
        'kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
    },
    metadata: refWith(META_SCHEMAS.objectMeta, METADATA_DESCRIPTION),
  };
  const required = Array.isArray(schema.required) ? [...(schema.required as string[])] : [];
  for (const k of ['kind', 'apiVersion']) if (!required.includes(k)) required.push(k);
  schema.required = required;
}

function kindSchema(info: CrdInfo, version: CrdVersionInfo): JsonObject {
  const gvk = [{ group: info.group, kind: info.names.kind, version: version.name }];
  const selectable = version.selectableFields.map((p) => ({ fieldPath: p.startsWith('.') ? p.slice(1) : p }));
  const extra = selectable.length > 0 ? { 'x-kubernetes-selectable-fields': selectable } : {};
  if (version.schema === undefined)
    return { type: 'object', 'x-kubernetes-group-version-kind': gvk, ...extra };
  const schema = toOpenApi(version.schema as unknown as JsonObject);
  const props = isObject(schema.properties) ? schema.properties : {};
  schema.properties = {
    ...props,
    metadata: refWith(META_SCHEMAS.objectMeta, METADATA_DESCRIPTION),
    apiVersion: TYPE_META.apiVersion,
    kind: TYPE_META.kind,
  };
  addEmbedded(schema);
  return { ...schema, 'x-kubernetes-group-version-kind': gvk, ...extra };
}

function listSchema(info: CrdInfo, version: CrdVersionInfo): JsonObject {
  return {
    description: `${info.names.listKind} is a list of ${info.names.kind}`,
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion: TYPE_META.apiVersion,
      items: {
        type: 'array',
        items: ref(modelName(info.group, version.name, info.names.kind)),
        description: `List of ${info.names.plural}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`,
      },
      kind: TYPE_META.kind,
      metadata: refWith(
        META_SCHEMAS.listMeta,
        'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
      ),
    },
    'x-kubernetes-group-version-kind': [
      { group: info.group, kind: info.names.listKind, version: version.name },
    ],
  };
}

interface Document {
  readonly openapi: string;
  readonly info: { readonly title: string; readonly version: string };
  readonly paths: Record<string, unknown>;
  readonly components: { readonly schemas: Record<string, unknown> };
}

function documentOf(parts: ReadonlyArray<{ info: CrdInfo; version: CrdVersionInfo }>): Document {
  const paths: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = metaComponents(parts.some((p) => p.version.scale !== undefined));
  for (const { info, version } of parts) {
    const kind = modelName(info.group, version.name, info.names.kind);
    schemas[kind] = kindSchema(info, version);
    schemas[modelName(info.group, version.name, info.names.listKind)] = listSchema(info, version);
    Object.assign(
      paths,
      operationsFor(info, version, {
        kind,
        list: modelName(info.group, version.name, info.names.listKind),
        scale: SCALE_SCHEMA,
      }),
    );
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes CRD Swagger', version: 'v0.1.0' },
    paths,
    components: { schemas },
  };
}

/**
 * The OpenAPI v3 document of one version of a CRD (default: the storage version). Throws
 * {@link CrdInvalidError} for a CRD that does not pass validateCrd and
 * {@link CrdVersionNotFoundError} for an unknown version.
 *
 * @example
 * const doc = openApiV3ForCrd(websiteCrd, 'v1'); // serve at /openapi/v3/apis/example.com/v1
 */
export function openApiV3ForCrd(crd: CustomResourceDefinition, version?: string): unknown {
  const info = crdInfo(crd);
  const name = version ?? info.storageVersion ?? info.versions[0]?.name ?? '';
  const found = info.versions.find((v) => v.name === name);
  if (found === undefined) throw new CrdVersionNotFoundError(info.name, name);
  return documentOf([{ info, version: found }]);
}

/**
 * The merged document of every CRD serving `group`/`version` (what `/openapi/v3/apis/<group>/<version>`
 * returns when several kinds share a group version). CRDs that are not served at that version are
 * skipped.
 *
 * @example
 * openApiV3ForGroupVersion(allCrds, 'example.com', 'v1');
 */
export function openApiV3ForGroupVersion(
  crds: Iterable<CustomResourceDefinition>,
  group: string,
  version: string,
): unknown {
  const parts: { info: CrdInfo; version: CrdVersionInfo }[] = [];
  for (const crd of crds) {
    if (crd.spec?.group !== group) continue;
    const info = crdInfo(checkedCrd(crd));
    const v = info.versions.find((x) => x.name === version && x.served);
    if (v !== undefined) parts.push({ info, version: v });
  }
  return documentOf(parts);
}
