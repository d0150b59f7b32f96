import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { unauthorized } from './errors.ts';
import { faultAdminForbidden } from './fault-errors.ts';
import type { RequestTarget } from './request-info.ts';

/** Paths anonymous clients may read, as kube-apiserver's `system:public-info-viewer` role allows. */
function isPublic(target: RequestTarget): boolean {
  return target.kind === 'version' || target.kind === 'health';
}

function equalTokens(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * Bearer-token authentication: a request must carry `Authorization: Bearer <token>`; a wrong token
 * is a 401 everywhere, a missing one everywhere but `/version` and the health checks (which the
 * kubectl dispatcher and probes read anonymously). Without a configured token (insecure mode)
 * everything is allowed.
 */
export function authenticate(req: IncomingMessage, target: RequestTarget, token: string | undefined): void {
  if (token === undefined) return;
  const header = req.headers.authorization;
  if (header === undefined || header.trim() === '') {
    if (isPublic(target)) return;
    throw unauthorized();
  }
  const presented = bearerToken(header);
  if (presented === undefined || !equalTokens(presented, token)) throw unauthorized();
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
