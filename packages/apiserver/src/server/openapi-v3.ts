import { createHash } from 'node:crypto';
import { type ApiResource, groupVersion, type JsonObject } from './api-resource.ts';
import { builtinSchemaName, builtinSchemasV2, builtinSchemasV3 } from './builtin-schemas.ts';
import type { ApiServerExtensions } from './extensions.ts';
import type { ResourceRegistry } from './resource-registry.ts';
import { KUBERNETES_VERSION } from './version.ts';

/** One served OpenAPI v3 document: its JSON text and the hash its URL carries. */
export interface OpenApiDocument {
  readonly body: string;
  readonly hash: string;
}

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/** The schema name of a kind: `io.k8s.api.core.v1.ConfigMap`; reversed group for custom resources. */
function schemaName(resource: ApiResource): string {
  const builtin = builtinName(resource);
  if (builtin !== undefined) return builtin;
  if (resource.crd === undefined && resource.group === 'apiextensions.k8s.io') {
    return `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.${resource.version}.${resource.kind}`;
  }
  if (resource.crd === undefined) {
    const short = resource.group === '' ? 'core' : resource.group.replace(/\.k8s\.io$/, '');
    return `io.k8s.api.${short}.${resource.version}.${resource.kind}`;
  }
  return `${resource.group.split('.').reverse().join('.')}.${resource.version}.${resource.kind}`;
}

/** The generated definition of a built-in kind kube-apiserver 1.32 serves (never a custom resource). */
function builtinName(resource: ApiResource): string | undefined {
  return resource.crd === undefined
    ? builtinSchemaName(resource.group, resource.version, resource.kind)
    : undefined;
}

function kindSchema(resource: ApiResource, extensions: ApiServerExtensions): JsonObject {
  let schema: JsonObject | undefined;
  if (resource.crd !== undefined) schema = extensions.openApiV3ForCrd?.(resource.crd, resource.version);
  schema ??= { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  const properties = { ...((schema.properties as JsonObject | undefined) ?? {}) };
  properties.apiVersion = {
    type: 'string',
    description: 'The versioned schema of this representation of an object.',
  };
  properties.kind = { type: 'string', description: 'The REST resource this object represents.' };
  properties.metadata = { allOf: [{ $ref: `#/components/schemas/${OBJECT_META}` }], default: {} };
  return {
    ...schema,
    type: 'object',
    properties,
    'x-kubernetes-group-version-kind': [
      { group: resource.group, version: resource.version, kind: resource.kind },
    ],
  };
}

function queryParameter(name: string, description: string): JsonObject {
  return { name, in: 'query', description, schema: { type: 'string', uniqueItems: true } };
}

function operations(resource: ApiResource, ref: string, smp: boolean): JsonObject {
  const gvk = { group: resource.group, version: resource.version, kind: resource.kind };
  const body = { content: { 'application/json': { schema: { $ref: ref } } }, required: true };
  const ok = { '200': { description: 'OK', content: { 'application/json': { schema: { $ref: ref } } } } };
  const patchTypes = [
    'application/apply-patch+yaml',
    'application/json-patch+json',
    'application/merge-patch+json',
  ];
  if (smp) patchTypes.push('application/strategic-merge-patch+json');
  const patchSchema = { schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
  const common = { 'x-kubernetes-group-version-kind': gvk };
  const writeParams = [
    queryParameter('dryRun', 'When present, modifications are not persisted. Valid value: All.'),
    queryParameter('fieldManager', 'The name of the actor making the change.'),
    queryParameter(
      'fieldValidation',
      'Ignore, Warn (default) or Strict handling of unknown or duplicate fields.',
    ),
  ];
  return {
    get: { ...common, 'x-kubernetes-action': 'get', responses: ok },
    put: {
      ...common,
      'x-kubernetes-action': 'put',
      parameters: writeParams,
      requestBody: body,
      responses: ok,
    },
    patch: {
      ...common,
      'x-kubernetes-action': 'patch',
      parameters: [
        ...writeParams,
        queryParameter('force', 'Force an apply request to take ownership of conflicting fields.'),
      ],
      requestBody: { content: Object.fromEntries(patchTypes.map((t) => [t, patchSchema])), required: true },
      responses: ok,
    },
    delete: { ...common, 'x-kubernetes-action': 'delete', responses: { '200': { description: 'OK' } } },
  };
}

function itemPath(resource: ApiResource): string {
  const prefix = resource.group === '' ? '/api/v1' : `/apis/${resource.group}/${resource.version}`;
  const ns = resource.namespaced ? '/namespaces/{namespace}' : '';
  return `${prefix}${ns}/${resource.plural}/{name}`;
}

function pathParameters(resource: ApiResource): JsonObject[] {
  const params: JsonObject[] = [
    { name: 'name', in: 'path', required: true, schema: { type: 'string', uniqueItems: true } },
  ];
  if (resource.namespaced) {
    params.push({
      name: 'namespace',
      in: 'path',
      required: true,
      schema: { type: 'string', uniqueItems: true },
    });
  }
  return params;
}

function buildDocument(resources: readonly ApiResource[], extensions: ApiServerExtensions): JsonObject {
  const paths: JsonObject = {};
  const builtins = resources.map(builtinName).filter((name) => name !== undefined);
  const schemas: JsonObject = builtinSchemasV3([OBJECT_META, ...builtins]);
  for (const resource of resources) {
    const name = schemaName(resource);
    if (builtinName(resource) === undefined) schemas[name] = kindSchema(resource, extensions);
    const ref = `#/components/schemas/${name}`;
    const smp = resource.strategicMergePatch && extensions.applyStrategicMergePatch !== undefined;
    paths[itemPath(resource)] = { ...operations(resource, ref, smp), parameters: pathParameters(resource) };
    if (resource.statusSubresource) {
      paths[`${itemPath(resource)}/status`] = {
        ...operations(resource, ref, smp),
        parameters: pathParameters(resource),
      };
    }
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: KUBERNETES_VERSION.gitVersion },
    paths,
    components: { schemas },
  };
}

/**
 * The OpenAPI v2 document (`/openapi/v2`, JSON): the generated definitions of every built-in kind
 * served, with their references. Custom resources and paths are not described (kubectl reads v2
 * only for definitions, and only when v3 is not enough).
 */
function buildV2(resources: readonly ApiResource[]): JsonObject {
  const names = resources.map(builtinName).filter((name) => name !== undefined);
  return {
    swagger: '2.0',
    info: { title: 'Kubernetes', version: KUBERNETES_VERSION.gitVersion },
    paths: {},
    definitions: builtinSchemasV2([OBJECT_META, ...names]),
  };
}

/**
 * OpenAPI v3 as kube-openapi serves it: `/openapi/v3` lists `api/v1` and `apis/{g}/{v}`
 * with a `?hash=` that changes whenever the document does; each document has, per resource, a
 * PATCH operation with `x-kubernetes-group-version-kind` and a `fieldValidation` parameter (so
 * kubectl validates on the server) and a schema per kind for `kubectl explain`: built-in kinds by
 * their generated Kubernetes 1.32 definitions (no descriptions), custom resources by their CRD.
 * Rebuilt lazily when the registry changes. Also serves `/openapi/v2` ({@link v2}).
 */
export class OpenApiV3 {
  readonly #registry: ResourceRegistry;
  readonly #extensions: ApiServerExtensions;
  #generation = -1;
  #documents = new Map<string, OpenApiDocument>();
  #v2: OpenApiDocument | undefined;
  #v2Generation = -1;

  constructor(registry: ResourceRegistry, extensions: ApiServerExtensions) {
    this.#registry = registry;
    this.#extensions = extensions;
  }

  /** The `/openapi/v3` index. */
  index(): JsonObject {
    const paths: JsonObject = {};
    for (const [path, doc] of this.#current())
      paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${doc.hash}` };
    return { paths };
  }

  /** The `/openapi/v2` document (JSON). */
  v2(): OpenApiDocument {
    if (this.#v2 !== undefined && this.#v2Generation === this.#registry.generation) return this.#v2;
    const resources = this.#registry.groups().flatMap((g) => g.versions.flatMap((v) => v.resources));
    const body = JSON.stringify(buildV2(resources));
    const hash = createHash('sha512').update(body).digest('hex').toUpperCase().slice(0, 128);
    this.#v2 = { body, hash };
    this.#v2Generation = this.#registry.generation;
    return this.#v2;
  }

  /** The document at `api/v1` or `apis/{group}/{version}`. */
  document(path: string): OpenApiDocument | undefined {
    return this.#current().get(path);
  }

  /** The CRD module's document for a group/version served only by CRDs, else the minimal one. */
  #document(group: string, version: string, resources: readonly ApiResource[]): JsonObject {
    const forCrds = this.#extensions.openApiV3ForGroupVersion;
    const crds = resources.map((r) => r.crd);
    if (forCrds !== undefined && crds.length > 0 && crds.every((c) => c !== undefined)) {
      try {
        return forCrds([...new Set(crds)], group, version);
      } catch {
        // A CRD the module cannot describe: fall back to the minimal document.
      }
    }
    return buildDocument(resources, this.#extensions);
  }

  #current(): Map<string, OpenApiDocument> {
    if (this.#generation === this.#registry.generation) return this.#documents;
    const documents = new Map<string, OpenApiDocument>();
    for (const group of this.#registry.groups()) {
      for (const version of group.versions) {
        const path =
          group.name === ''
            ? `api/${version.version}`
            : `apis/${groupVersion({ group: group.name, version: version.version })}`;
        const body = JSON.stringify(this.#document(group.name, version.version, version.resources));
        const hash = createHash('sha512').update(body).digest('hex').toUpperCase().slice(0, 128);
        documents.set(path, { body, hash });
      }
    }
    this.#documents = documents;
    this.#generation = this.#registry.generation;
    return documents;
  }
}
