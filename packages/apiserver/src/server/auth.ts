import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ForbiddenError, InternalError, isNotFound } from '@converge/runtime';
import {
  authorize,
  forbiddenMessage,
  MASTERS_GROUP,
  type RequestAttributes,
  type UserInfo,
} from './authorize.ts';
import type { ServerContext } from './context.ts';
import { unauthorized } from './errors.ts';
import { faultAdminForbidden } from './fault-errors.ts';
import type { RbacAuthorizer } from './rbac-authorizer.ts';
import type { RequestTarget } from './request-info.ts';
import { parseRequestUrl, type RequestUrl } from './request-url.ts';
import {
  type ServiceAccountClaims,
  serviceAccountUser,
  tokenKeys,
  verifyToken,
} from './service-account-token.ts';

/** The user of the server's bearer token (kubeconfig `converge`): cluster-admin. */
export const ADMIN_USER: UserInfo = {
  username: 'converge-admin',
  groups: ['system:masters', 'system:authenticated'],
};
/** Every request in insecure mode, as kube-apiserver's old insecure port saw it. */
export const UNSECURED_USER: UserInfo = {
  username: 'system:unsecured',
  groups: ['system:masters', 'system:authenticated'],
};
/** A request without credentials where anonymous requests are served (`/version`, health). */
export const ANONYMOUS_USER: UserInfo = { username: 'system:anonymous', groups: ['system:unauthenticated'] };

/** What authentication knows about a request: its user, and the server token (token signing key). */
export interface RequestAuth {
  readonly user: UserInfo;
  /** The server's bearer token (undefined in insecure mode). */
  readonly apiToken: string | undefined;
  /** The ServiceAccount a token named (checked against the store: {@link liveServiceAccounts}). */
  readonly serviceAccount?: ServiceAccountClaims;
}

const auths = new WeakMap<IncomingMessage, RequestAuth>();

/** The user {@link authenticate} found for a request (insecure mode: `system:unsecured`). */
export function requestUser(req: IncomingMessage): UserInfo {
  return auths.get(req)?.user ?? UNSECURED_USER;
}

/** The authentication of a request (a request never authenticated: insecure, `system:unsecured`). */
export function requestAuth(req: IncomingMessage): RequestAuth {
  return auths.get(req) ?? { user: UNSECURED_USER, apiToken: undefined };
}

/** Paths anonymous clients may read, as kube-apiserver's `system:public-info-viewer` role allows. */
function isPublic(target: RequestTarget): boolean {
  return target.kind === 'version' || target.kind === 'health';
}

function equalTokens(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** The verb of a request as kube-apiserver's RequestInfoFactory names it. */
function resourceVerb(
  method: string,
  target: Extract<RequestTarget, { kind: 'resource' }>,
  url: RequestUrl,
): string {
  const watch = url.searchParams.get('watch');
  switch (method) {
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return target.name === undefined ? 'deletecollection' : 'delete';
    case 'GET':
    case 'HEAD':
      if (target.watchPath === true || watch === '1' || watch === 'true') return 'watch';
      return target.name === undefined ? 'list' : 'get';
    default:
      return method.toLowerCase();
  }
}

/** The authorization attributes of a request. */
export function requestAttributes(req: IncomingMessage, target: RequestTarget): RequestAttributes {
  const url = parseRequestUrl(req.url);
  const method = req.method ?? 'GET';
  if (target.kind !== 'resource')
    return { resourceRequest: false, verb: method.toLowerCase(), path: url.pathname };
  return {
    resourceRequest: true,
    verb: resourceVerb(method, target, url),
    group: target.group,
    version: target.version,
    resource: target.resource,
    subresource: target.subresource ?? '',
    namespace: target.namespace,
    name: target.name ?? '',
  };
}

/**
 * Authentication, then authorization. A request carries `Authorization: Bearer <token>`: the
 * server's token is the admin (`system:masters`); a ServiceAccount token this server issued
 * (TokenRequest) is that ServiceAccount, allowed what {@link authorize} grants it over `rbac` (the
 * stored Roles and bindings; 403 otherwise).
 * A wrong token is a 401 everywhere, a missing one everywhere but `/version` and the health checks
 * (which the kubectl dispatcher and probes read anonymously). Without a configured token
 * (insecure mode) every request is `system:unsecured` (allowed everything) unless it presents a
 * valid ServiceAccount token. The user is kept for {@link requestUser}.
 *
 * A ServiceAccount token is valid only while its ServiceAccount exists with the uid it names
 * (`isLive`, {@link liveServiceAccounts}): checked before impersonation and authorization, so a
 * deleted or re-created account's token is a 401 on every path, discovery included, as in
 * kube-apiserver — never a 403 nor a 200.
 */
export async function authenticate(
  req: IncomingMessage,
  target: RequestTarget,
  token: string | undefined,
  nowMs: number = Date.now(),
  rbac?: RbacAuthorizer,
  isLive?: (claims: ServiceAccountClaims) => Promise<boolean>,
): Promise<UserInfo> {
  const header = req.headers.authorization;
  const presented = bearerToken(header);
  let user: UserInfo | undefined;
  let serviceAccount: ServiceAccountClaims | undefined;
  if (token !== undefined && presented !== undefined && equalTokens(presented, token)) user = ADMIN_USER;
  else if (presented !== undefined && presented.split('.').length === 3) {
    const verdict = verifyToken(tokenKeys(token), presented, nowMs);
    if (verdict.ok) {
      if (isLive !== undefined && !(await isLive(verdict.claims))) throw unauthorized();
      user = serviceAccountUser(verdict.claims);
      serviceAccount = verdict.claims;
    }
  }
  if (user === undefined) {
    if (token === undefined) user = UNSECURED_USER;
    else if ((header === undefined || header.trim() === '') && isPublic(target)) user = ANONYMOUS_USER;
    else throw unauthorized();
  }
  const acting = impersonate(req, user, rbac);
  if (acting !== undefined) {
    user = acting;
    serviceAccount = undefined;
  }
  auths.set(req, { user, apiToken: token, ...(serviceAccount === undefined ? {} : { serviceAccount }) });
  // anonymous probes read every health check (upstream's public-info-viewer: the endpoints only)
  if (user === ANONYMOUS_USER) return user;
  // system:masters may do everything: no attributes to compute on the hot path
  if (user.groups.includes(MASTERS_GROUP)) return user;
  const attributes = requestAttributes(req, target);
  const decision = authorize(user, attributes, rbac);
  if (!decision.allowed) throw forbidden(user, attributes, decision.reason);
  return user;
}

/** kube-apiserver's 403 (`responsewriters.Forbidden`). */
function forbidden(user: UserInfo, attributes: RequestAttributes, reason: string): ForbiddenError {
  const base = forbiddenMessage(user, attributes);
  const text = reason === '' ? base : `${base}: ${reason}`;
  if (!attributes.resourceRequest) return new ForbiddenError(`forbidden: ${text}`, { details: {} });
  const subject =
    attributes.name === ''
      ? qualified(attributes)
      : `${qualified(attributes)} ${JSON.stringify(attributes.name)}`;
  return new ForbiddenError(`${subject} is forbidden: ${text}`, {
    details: {
      ...(attributes.name === '' ? {} : { name: attributes.name }),
      ...(attributes.group === '' ? {} : { group: attributes.group }),
      kind: attributes.resource,
    },
  });
}

function qualified(attributes: { group: string; resource: string }): string {
  return attributes.group === '' ? attributes.resource : `${attributes.resource}.${attributes.group}`;
}

function bearerToken(header: string | undefined): string | undefined {
  return header === undefined ? undefined : /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
}

/**
 * The fault admin endpoint's own check: only its token opens it, in insecure mode too. The API's
 * token is known but not enough (403, `CONVERGE_ERR_APISERVER_FAULT_ADMIN_FORBIDDEN`); no token or
 * any other is a 401.
 */
export function authenticateFaultAdmin(
  req: IncomingMessage,
  adminToken: string,
  apiToken: string | undefined,
): void {
  const presented = bearerToken(req.headers.authorization);
  if (presented === undefined) throw unauthorized();
  if (equalTokens(presented, adminToken)) return;
  if (apiToken !== undefined && equalTokens(presented, apiToken)) throw faultAdminForbidden();
  throw unauthorized();
}

/**
 * Whether the ServiceAccount a token names still exists with the uid the token names (a token
 * without a uid: whether it exists), read from the server's store; for {@link authenticate}.
 */
export function liveServiceAccounts(
  server: ServerContext,
): (claims: ServiceAccountClaims) => Promise<boolean> {
  return async (claims) => {
    const type = server.registry.lookup('', 'v1', 'serviceaccounts');
    if (type === undefined) return true;
    try {
      const sa = await server.store.get(type.storage, { namespace: claims.namespace, name: claims.name });
      return claims.uid === '' || sa.metadata.uid === claims.uid;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  };
}

const SA_PREFIX = 'system:serviceaccount:';

function headerValues(req: IncomingMessage, name: string): string[] {
  const raw = req.headersDistinct[name];
  return raw === undefined
    ? []
    : raw.flatMap((v) => v.split(',').map((p) => p.trim())).filter((v) => v !== '');
}

/**
 * The extra's key of an `Impersonate-Extra-<key>` header: percent-decoded (a key such as
 * `authentication.kubernetes.io/pod-name` travels as `authentication.kubernetes.io%2fpod-name`);
 * kept as sent when the encoding is malformed, as kube-apiserver's `unescapeExtraKey` does.
 */
function unescapeExtraKey(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return encoded;
  }
}

/**
 * Impersonation (`Impersonate-User`, `-Group`, `-Uid`, `-Extra-*` headers, `kubectl --as`), as
 * kube-apiserver's impersonation filter: each requested identity needs the `impersonate` verb on
 * `users`, `serviceaccounts` (namespaced), `groups`, `uids` or `userextras` (403 otherwise); the
 * new user gets `system:authenticated` (a ServiceAccount without requested groups: its groups).
 * Undefined when the request impersonates nobody.
 */
function impersonate(
  req: IncomingMessage,
  requestor: UserInfo,
  rbac: RbacAuthorizer | undefined,
): UserInfo | undefined {
  const users = headerValues(req, 'impersonate-user');
  const groups = req.headersDistinct['impersonate-group'] ?? [];
  const uid = req.headersDistinct['impersonate-uid']?.[0] ?? '';
  const extraHeaders = Object.keys(req.headers).filter((h) => h.startsWith('impersonate-extra-'));
  if (users.length === 0) {
    if (groups.length > 0 || uid !== '' || extraHeaders.length > 0)
      throw new InternalError(
        'requested impersonation of groups, a uid or extras without impersonating a user',
      );
    return undefined;
  }
  const username = users[0] as string;
  const check = (attributes: RequestAttributes): void => {
    const decision = authorize(requestor, attributes, rbac);
    if (!decision.allowed) throw forbidden(requestor, attributes, decision.reason);
  };
  const base = {
    resourceRequest: true as const,
    verb: 'impersonate',
    version: '',
    subresource: '',
    namespace: '',
  };
  const sa = username.startsWith(SA_PREFIX) ? username.slice(SA_PREFIX.length).split(':') : undefined;
  if (sa !== undefined && sa.length === 2 && sa[0] !== '' && sa[1] !== '')
    check({
      ...base,
      group: '',
      resource: 'serviceaccounts',
      namespace: sa[0] as string,
      name: sa[1] as string,
    });
  else check({ ...base, group: '', resource: 'users', name: username });
  for (const group of groups) check({ ...base, group: '', resource: 'groups', name: group });
  if (uid !== '') check({ ...base, group: 'authentication.k8s.io', resource: 'uids', name: uid });
  const extra: Record<string, string[]> = {};
  for (const header of extraHeaders) {
    const key = unescapeExtraKey(header.slice('impersonate-extra-'.length));
    for (const value of req.headersDistinct[header] ?? []) {
      check({
        ...base,
        group: 'authentication.k8s.io',
        resource: 'userextras',
        subresource: key,
        name: value,
      });
      extra[key] = [...(extra[key] ?? []), value];
    }
  }
  let finalGroups = [...groups];
  if (sa !== undefined && sa.length === 2 && groups.length === 0)
    finalGroups = ['system:serviceaccounts', `system:serviceaccounts:${sa[0] as string}`];
  if (username === 'system:anonymous') {
    if (!finalGroups.includes('system:unauthenticated')) finalGroups.push('system:unauthenticated');
  } else if (
    !finalGroups.includes('system:authenticated') &&
    !finalGroups.includes('system:unauthenticated')
  ) {
    finalGroups.push('system:authenticated');
  }
  return {
    username,
    groups: finalGroups,
    ...(uid === '' ? {} : { uid }),
    ...(Object.keys(extra).length === 0 ? {} : { extra }),
  };
}
