import { BadRequestError } from '@converge/runtime';
import { isPathSegmentName } from '../crd/index.ts';
import { pathSegments } from './request-url.ts';

/** A request for a REST resource: `/api/v1/…` or `/apis/{group}/{version}/…`. */
export interface ResourceTarget {
  readonly kind: 'resource';
  readonly group: string;
  readonly version: string;
  /** The namespace from `…/namespaces/{ns}/…` ('' when the path has none). */
  readonly namespace: string;
  readonly resource: string;
  readonly name?: string;
  readonly subresource?: string;
  /**
   * The deprecated watch path `…/{version}/watch/…`: a watch of the collection, or with `name`
   * a watch of that one object (`fieldSelector=metadata.name=NAME`).
   */
  readonly watchPath?: true;
}

/** What a request path addresses. */
export type RequestTarget =
  | { readonly kind: 'version' | 'health' | 'api' | 'apis' | 'openapi-v3' | 'openapi-v2' | 'unknown' }
  | { readonly kind: 'group'; readonly group: string }
  | { readonly kind: 'group-version'; readonly group: string; readonly version: string }
  | { readonly kind: 'openapi-v3-doc'; readonly path: string }
  | ResourceTarget;

/** Subresources of a Namespace that `/api/v1/namespaces/{name}/{sub}` addresses (as upstream). */
const NAMESPACE_SUBRESOURCES: ReadonlySet<string> = new Set(['status', 'finalize']);
const HEALTH: ReadonlySet<string> = new Set(['healthz', 'livez', 'readyz']);

/**
 * `IsValidPathSegmentName` for the namespace and name a resource path carries: never `.` or `..`
 * (a client or proxy would resolve them to another object), never `/` or `%`. Refused before
 * authentication, authorization, admission or any store access, with kube-apiserver's words.
 */
function checkPathNames(target: ResourceTarget): void {
  if (target.namespace !== '') {
    const problems = isPathSegmentName(target.namespace, false);
    if (problems.length > 0)
      throw new BadRequestError(
        `Namespace parameter invalid: ${JSON.stringify(target.namespace)}: ${problems.join(';')}`,
      );
  }
  if (target.name !== undefined) {
    const problems = isPathSegmentName(target.name, false);
    if (problems.length > 0)
      throw new BadRequestError(
        `Name parameter invalid: ${JSON.stringify(target.name)}: ${problems.join(';')}`,
      );
  }
}

/**
 * Parses a raw request path (never normalised: see {@link pathSegments}) as kube-apiserver's
 * RequestInfoFactory does: discovery and OpenAPI documents, and resource paths —
 * `{prefix}/{resource}[/{name}[/{sub}]]` with an optional `namespaces/{ns}/` before the resource;
 * `/api/v1/namespaces/{name}/status` is the namespace's own subresource. A `.` or `..` segment is
 * never resolved: as a namespace or name it is a 400 (with `/` and `%`, kube's path segment
 * rule), anywhere else it names nothing the server serves (404). An empty segment inside an API
 * path (`namespaces//configmaps`) addresses nothing either.
 */
export function parseRequestPath(pathname: string): RequestTarget {
  const raw = pathSegments(pathname);
  const api = raw[0] === 'api' || raw[0] === 'apis';
  if (api && raw.includes('')) return { kind: 'unknown' };
  // outside the API, empty segments are skipped as they always were (`/healthz//ping`)
  const parts = api ? raw : raw.filter((part) => part !== '');
  const [first, second] = parts;
  if (first === undefined) return { kind: 'unknown' };
  if (parts.length === 1 && first === 'version') return { kind: 'version' };
  if (HEALTH.has(first) && parts.length <= 2) return { kind: 'health' };
  if (first === 'openapi') {
    if (second === 'v2' && parts.length === 2) return { kind: 'openapi-v2' };
    if (second === 'v3') {
      return parts.length === 2
        ? { kind: 'openapi-v3' }
        : { kind: 'openapi-v3-doc', path: parts.slice(2).join('/') };
    }
    return { kind: 'unknown' };
  }
  let group: string;
  let version: string | undefined;
  let rest: string[];
  if (first === 'api') {
    if (parts.length === 1) return { kind: 'api' };
    group = '';
    version = second;
    rest = parts.slice(2);
  } else if (first === 'apis') {
    if (parts.length === 1) return { kind: 'apis' };
    group = second as string;
    if (parts.length === 2) return { kind: 'group', group };
    version = parts[2];
    rest = parts.slice(3);
  } else {
    return { kind: 'unknown' };
  }
  if (version === undefined) return { kind: 'unknown' };
  if (rest.length === 0) return { kind: 'group-version', group, version };
  // RequestInfoFactory: `watch` right after the version is the deprecated watch verb prefix
  const watchPath = rest[0] === 'watch';
  if (watchPath) {
    rest = rest.slice(1);
    if (rest.length === 0) return { kind: 'unknown' };
  }
  let namespace = '';
  if (rest[0] === 'namespaces' && rest.length >= 3 && !NAMESPACE_SUBRESOURCES.has(rest[2] as string)) {
    namespace = rest[1] as string;
    rest = rest.slice(2);
  }
  if (rest.length > 3) return { kind: 'unknown' };
  const [resource, name, subresource] = rest as [string, string | undefined, string | undefined];
  const target: ResourceTarget = {
    kind: 'resource',
    group,
    version,
    namespace,
    resource,
    ...(name === undefined ? {} : { name }),
    ...(subresource === undefined ? {} : { subresource }),
    ...(watchPath ? { watchPath: true as const } : {}),
  };
  checkPathNames(target);
  return target;
}
