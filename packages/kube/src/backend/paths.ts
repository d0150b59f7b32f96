import type { ResourceType } from '@converge/runtime';

/**
 * `/api/v1` for the core group, `/apis/{group}/{version}` for the others.
 *
 * @example
 * groupVersionPath({ group: 'apps', version: 'v1' }); // '/apis/apps/v1'
 */
export function groupVersionPath(type: Pick<ResourceType, 'group' | 'version'>): string {
  return type.group === '' ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`;
}

/**
 * The REST path of a resource, as kube-apiserver serves it: the collection
 * (`…/namespaces/{ns}/{plural}`, or `…/{plural}` across namespaces and for cluster-scoped kinds),
 * one object (`…/{name}`), or its subresource (`…/{name}/status`). Segments are URL-encoded.
 *
 * @example
 * resourcePath(configMaps, 'default', 'settings'); // '/api/v1/namespaces/default/configmaps/settings'
 */
export function resourcePath(
  type: Pick<ResourceType, 'group' | 'version' | 'plural' | 'namespaced'>,
  namespace: string,
  name?: string,
  subresource?: string,
): string {
  const scope = type.namespaced && namespace !== '' ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  const object = name === undefined ? '' : `/${encodeURIComponent(name)}`;
  const sub = subresource === undefined || name === undefined ? '' : `/${subresource}`;
  return `${groupVersionPath(type)}${scope}/${type.plural}${object}${sub}`;
}
