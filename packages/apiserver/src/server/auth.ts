import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { unauthorized } from './errors.ts';
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
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (match === null || !equalTokens(match[1] as string, token)) throw unauthorized();
}
