import type { ApiResource } from './api-resource.ts';
import type { ApiGroup, ResourceRegistry } from './resource-registry.ts';

/** The Content-Type of aggregated discovery responses; client-go decides the format by it. */
export function aggregatedContentType(version: 'v2' | 'v2beta1'): string {
  return `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`;
}

const SUBRESOURCE_VERBS = ['get', 'patch', 'update'];

function groupVersionOf(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

/** `/api`: the legacy core versions. */
export function apiVersions(serverAddress: string): object {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function apiGroup(group: ApiGroup): object {
  const versions = group.versions.map((v) => ({
    groupVersion: groupVersionOf(group.name, v.version),
    version: v.version,
  }));
  return { name: group.name, versions, preferredVersion: versions[0] };
}

/** `/apis`: every named group (legacy APIGroupList). */
export function apiGroupList(registry: ResourceRegistry): object {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: registry
      .groups()
      .filter((g) => g.name !== '')
      .map(apiGroup),
  };
}

/** `/apis/{group}`: one group (APIGroup), or undefined when not served. */
export function apiGroupDocument(registry: ResourceRegistry, name: string): object | undefined {
  const group = registry.groups().find((g) => g.name === name && name !== '');
  return group === undefined ? undefined : { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(group) };
}

function byName(a: object, b: object): number {
  const x = (a as { name: string }).name;
  const y = (b as { name: string }).name;
  return x < y ? -1 : x > y ? 1 : 0;
}

function legacyResource(resource: ApiResource): object[] {
  const main: Record<string, unknown> = {
    name: resource.plural,
    singularName: resource.singular,
    namespaced: resource.namespaced,
    kind: resource.kind,
    verbs: resource.verbs,
  };
  if (resource.shortNames.length > 0) main.shortNames = resource.shortNames;
  if (resource.categories.length > 0) main.categories = resource.categories;
  const out: object[] = [main];
  if (resource.scale !== undefined) {
    out.push({
      name: `${resource.plural}/scale`,
      singularName: '',
      namespaced: resource.namespaced,
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
      verbs: SUBRESOURCE_VERBS,
    });
  }
  if (resource.statusSubresource) {
    out.push({
      name: `${resource.plural}/status`,
      singularName: '',
      namespaced: resource.namespaced,
      kind: resource.kind,
      verbs: SUBRESOURCE_VERBS,
    });
  }
  for (const sub of resource.subresources ?? []) {
    out.push({
      name: `${resource.plural}/${sub.name}`,
      singularName: '',
      namespaced: resource.namespaced,
      ...(sub.group === undefined ? {} : { group: sub.group }),
      ...(sub.version === undefined ? {} : { version: sub.version }),
      kind: sub.kind,
      verbs: sub.verbs,
    });
  }
  return [out[0] as object, ...out.slice(1).sort((a, b) => byName(a, b))];
}

/**
 * `/api/v1` or `/apis/{group}/{version}` (APIResourceList): main resources first, then their
 * subresources (client-node takes the first resource whose kind matches).
 */
export function apiResourceList(
  registry: ResourceRegistry,
  group: string,
  version: string,
): object | undefined {
  const served = registry
    .groups()
    .find((g) => g.name === group)
    ?.versions.find((v) => v.version === version);
  if (served === undefined) return undefined;
  const entries = served.resources.map(legacyResource);
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: groupVersionOf(group, version),
    resources: [...entries.map((e) => e[0]), ...entries.flatMap((e) => e.slice(1))],
  };
}

function aggregatedResource(resource: ApiResource): object {
  const out: Record<string, unknown> = {
    resource: resource.plural,
    responseKind: { group: resource.group, version: resource.version, kind: resource.kind },
    scope: resource.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: resource.singular,
    verbs: resource.verbs,
  };
  if (resource.shortNames.length > 0) out.shortNames = resource.shortNames;
  if (resource.categories.length > 0) out.categories = resource.categories;
  const subresources: { subresource: string; [field: string]: unknown }[] = [];
  if (resource.scale !== undefined) {
    subresources.push({
      subresource: 'scale',
      responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
      verbs: SUBRESOURCE_VERBS,
    });
  }
  if (resource.statusSubresource) {
    subresources.push({
      subresource: 'status',
      responseKind: { group: resource.group, version: resource.version, kind: resource.kind },
      verbs: SUBRESOURCE_VERBS,
    });
  }
  for (const sub of resource.subresources ?? []) {
    subresources.push({
      subresource: sub.name,
      responseKind: {
        group: sub.group ?? resource.group,
        version: sub.version ?? resource.version,
        kind: sub.kind,
      },
      verbs: sub.verbs,
    });
  }
  subresources.sort((a, b) => (a.subresource < b.subresource ? -1 : a.subresource > b.subresource ? 1 : 0));
  if (subresources.length > 0) out.subresources = subresources;
  return out;
}

/**
 * Aggregated discovery (`APIGroupDiscoveryList`, apidiscovery.k8s.io v2 or v2beta1): the core group
 * for `/api`, every named group for `/apis`; versions preferred first.
 */
export function aggregatedDiscovery(
  registry: ResourceRegistry,
  version: 'v2' | 'v2beta1',
  core: boolean,
): object {
  const items = registry
    .groups()
    .filter((g) => (g.name === '') === core)
    .map((g) => ({
      metadata: g.name === '' ? { creationTimestamp: null } : { name: g.name, creationTimestamp: null },
      versions: g.versions.map((v) => ({
        version: v.version,
        resources: v.resources.map(aggregatedResource),
        freshness: 'Current',
      })),
    }));
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: `apidiscovery.k8s.io/${version}`,
    metadata: {},
    items,
  };
}
