import { BadRequestError } from '@converge/runtime';

/**
 * A request's target exactly as the client sent it: the raw path, never normalised, and the query.
 *
 * WHATWG `new URL()` removes dot segments (`a/../b` → `b`, also `%2e%2e`) and reads `\` as `/`,
 * turning `DELETE …/configmaps/..` into a DELETE of the namespace. Go's net/http does neither for
 * kube-apiserver's handlers, and neither does this: every part of the server that routes,
 * authorizes or matches a request reads this one parse of `req.url`.
 */
export interface RequestUrl {
  /** The path as sent (origin-form; the path of an absolute-form target), without the query. */
  readonly pathname: string;
  /** The query, parsed with `URLSearchParams` (as `URL.searchParams` parses it). */
  readonly searchParams: URLSearchParams;
}

const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

/**
 * Splits a request target (`req.url`) into its raw path and its query. An absolute-form target
 * (`http://host/path`) gives its path; anything that is not a path (`*`, `foo`) is a 400.
 *
 * @example
 * parseRequestUrl('/api/v1/namespaces/a/configmaps/..?pretty=1').pathname; // '/api/v1/namespaces/a/configmaps/..'
 */
export function parseRequestUrl(raw: string | undefined): RequestUrl {
  let target = raw ?? '/';
  const hash = target.indexOf('#');
  if (hash >= 0) target = target.slice(0, hash);
  const absolute = ABSOLUTE_FORM.exec(target);
  if (absolute !== null) target = target.slice(absolute[0].length);
  const question = target.indexOf('?');
  const pathname = question < 0 ? target : target.slice(0, question);
  const search = question < 0 ? '' : target.slice(question + 1);
  if (absolute !== null && pathname === '')
    return { pathname: '/', searchParams: new URLSearchParams(search) };
  if (!pathname.startsWith('/')) throw new BadRequestError(`invalid request URI: ${JSON.stringify(raw)}`);
  return { pathname, searchParams: new URLSearchParams(search) };
}

/**
 * The segments of a raw path, as kube-apiserver's RequestInfoFactory splits it: leading and
 * trailing slashes trimmed, split on `/`, each segment percent-decoded once. Empty inner
 * segments (`a//b`) are kept; `.` and `..` are kept as they are (never resolved). A segment that
 * does not decode, or decodes to something holding `/` (`%2F`), is a 400: it would address
 * another path than the one sent.
 *
 * @example
 * pathSegments('/api/v1/namespaces/a/configmaps/%2e%2e/'); // ['api', 'v1', 'namespaces', 'a', 'configmaps', '..']
 */
export function pathSegments(pathname: string): string[] {
  const trimmed = pathname.replace(/^\/+|\/+$/g, '');
  if (trimmed === '') return [];
  return trimmed.split('/').map((segment) => {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      throw new BadRequestError(`invalid path: ${JSON.stringify(pathname)}`);
    }
    if (decoded.includes('/')) {
      throw new BadRequestError(
        `invalid path: ${JSON.stringify(pathname)}: segment ${JSON.stringify(decoded)} may not contain '/'`,
      );
    }
    return decoded;
  });
}
