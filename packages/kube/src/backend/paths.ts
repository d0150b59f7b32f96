import { BadRequestError, type ResourceType } from '@converge/runtime';

/**
 * client-go's `IsValidPathSegmentName`: why `value` may not be one segment of a request path — it
 * is `.` or `..` (which URL handling would resolve to another path: `configmaps/..` is the
 * namespace) or holds `/` or `%`. Empty when it may.
 *
 * @example
 * pathSegmentNameProblems('..'); // ["may not be '..'"]
 * pathSegmentNameProblems('a/b%'); // ["may not contain '/'", "may not contain '%'"]
 */
export function pathSegmentNameProblems(value: string): string[] {
  if (value === '.' || value === '..') return [`may not be '${value}'`];
  return ['/', '%'].filter((c) => value.includes(c)).map((c) => `may not contain '${c}'`);
}

/** Refuses, as client-go's request builder does, a path segment that would address another path. */
function checkSegment(
  what: 'namespace' | 'resource name' | 'subresource',
  value: string,
  plural: string,
): void {
  const details = { ...(what === 'resource name' ? { name: value } : {}), kind: plural };
  if (value === '') throw new BadRequestError(`${what} may not be empty`, { details });
  const problems = pathSegmentNameProblems(value);
  if (problems.length === 0) return;
  throw new BadRequestError(`invalid ${what} ${JSON.stringify(value)}: [${problems.join(' ')}]`, { details });
}

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
 * A namespace, name or subresource that is `.` or `..` or holds `/` or `%`, and an empty name or
 * subresource, are a `BadRequestError` before any request is built (never a request that a URL
 * parser could resolve to another object: `configmaps/..` is the namespace, `configmaps/` the
 * collection).
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
  if (type.namespaced && namespace !== '') checkSegment('namespace', namespace, type.plural);
  if (name !== undefined) checkSegment('resource name', name, type.plural);
  if (subresource !== undefined) checkSegment('subresource', subresource, type.plural);
  const scope = type.namespaced && namespace !== '' ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  const object = name === undefined ? '' : `/${encodeURIComponent(name)}`;
  const sub = subresource === undefined || name === undefined ? '' : `/${encodeURIComponent(subresource)}`;
  return `${groupVersionPath(type)}${scope}/${type.plural}${object}${sub}`;
}
