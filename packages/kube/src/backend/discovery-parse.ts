import type { ResourceType } from '@converge/runtime';
import { ResponseDecodeError } from '../errors.ts';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function array(value: unknown, what: string, field: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new ResponseDecodeError(what, field, 'is not a list');
  return value;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') && value.length > 0
    ? (value as string[])
    : undefined;
}

/**
 * The main resources of an aggregated discovery document (`APIGroupDiscoveryList`, apidiscovery
 * v2 or v2beta1), versions in the server's preference order. Candidates are not validated yet.
 *
 * @example
 * const types = parseAggregated(JSON.parse(await (await fetch(`${server}/apis`, { headers: { accept: V2 } })).text()));
 */
export function parseAggregated(body: unknown): ResourceType[] {
  const what = 'aggregated discovery';
  if (!isObject(body)) throw new ResponseDecodeError(what, '(body)', 'is not an object');
  const out: ResourceType[] = [];
  for (const [g, group] of array(body.items, what, 'items').entries()) {
    if (!isObject(group)) continue;
    const groupName = isObject(group.metadata) ? (text(group.metadata.name) ?? '') : '';
    for (const [v, version] of array(group.versions, what, `items[${g}].versions`).entries()) {
      if (!isObject(version) || text(version.version) === undefined) continue;
      for (const resource of array(version.resources, what, `items[${g}].versions[${v}].resources`)) {
        if (!isObject(resource)) continue;
        const kind = isObject(resource.responseKind) ? text(resource.responseKind.kind) : undefined;
        const plural = text(resource.resource);
        if (kind === undefined || plural === undefined) continue;
        const subresources = Array.isArray(resource.subresources) ? resource.subresources : [];
        const shortNames = strings(resource.shortNames);
        const singular = text(resource.singularResource);
        out.push({
          group: groupName,
          version: version.version as string,
          kind,
          plural,
          namespaced: resource.scope === 'Namespaced',
          ...(singular === undefined ? {} : { singular }),
          ...(shortNames === undefined ? {} : { shortNames }),
          statusSubresource: subresources.some((s) => isObject(s) && s.subresource === 'status'),
        });
      }
    }
  }
  return out;
}

/**
 * The group versions of a legacy `APIGroupList` (`/apis`), preferred version of each group first.
 *
 * @example
 * parseLegacyGroups({ groups: [{ name: 'apps', versions: [{ groupVersion: 'apps/v1' }] }] }); // ['apps/v1']
 */
export function parseLegacyGroups(body: unknown): string[] {
  const what = 'discovery /apis';
  if (!isObject(body)) throw new ResponseDecodeError(what, '(body)', 'is not an object');
  const out: string[] = [];
  for (const group of array(body.groups, what, 'groups')) {
    if (!isObject(group)) continue;
    const preferred = isObject(group.preferredVersion)
      ? text(group.preferredVersion.groupVersion)
      : undefined;
    const versions = array(group.versions, what, 'groups[].versions')
      .map((v) => (isObject(v) ? text(v.groupVersion) : undefined))
      .filter((v): v is string => v !== undefined);
    if (preferred !== undefined) out.push(preferred);
    for (const version of versions) if (version !== preferred) out.push(version);
  }
  return out;
}

/**
 * The main resources of a legacy `APIResourceList` (`/api/v1`, `/apis/{group}/{version}`).
 *
 * @example
 * parseResourceList({ groupVersion: 'v1', resources: [{ name: 'pods', kind: 'Pod', namespaced: true }] });
 */
export function parseResourceList(body: unknown): ResourceType[] {
  const what = 'discovery resource list';
  if (!isObject(body)) throw new ResponseDecodeError(what, '(body)', 'is not an object');
  const groupVersion = text(body.groupVersion);
  if (groupVersion === undefined) throw new ResponseDecodeError(what, 'groupVersion', 'is missing');
  const slash = groupVersion.indexOf('/');
  const group = slash < 0 ? '' : groupVersion.slice(0, slash);
  const version = slash < 0 ? groupVersion : groupVersion.slice(slash + 1);
  const resources = array(body.resources, what, 'resources').filter(isObject);
  const names = new Set(resources.map((r) => text(r.name)));
  const out: ResourceType[] = [];
  for (const resource of resources) {
    const plural = text(resource.name);
    const kind = text(resource.kind);
    if (plural === undefined || kind === undefined || plural.includes('/')) continue;
    const shortNames = strings(resource.shortNames);
    const singular = text(resource.singularName);
    out.push({
      group,
      version,
      kind,
      plural,
      namespaced: resource.namespaced === true,
      ...(singular === undefined ? {} : { singular }),
      ...(shortNames === undefined ? {} : { shortNames }),
      statusSubresource: names.has(`${plural}/status`),
    });
  }
  return out;
}
