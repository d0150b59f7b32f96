import type { IncomingMessage, ServerResponse } from 'node:http';
import { isFenced } from '@converge/runtime';
import { authenticate, authenticateFaultAdmin, liveServiceAccounts } from './auth.ts';
import type { ServerContext } from './context.ts';
import {
  aggregatedContentType,
  aggregatedDiscovery,
  apiGroupDocument,
  apiGroupList,
  apiResourceList,
  apiVersions,
} from './discovery.ts';
import { dispatchResource, unknownResource } from './dispatch.ts';
import { HttpStatusError, methodNotAllowed } from './errors.ts';
import { isFaultAdminPath, serveFaultAdmin } from './fault-admin.ts';
import type { ServerFaultInjector } from './fault-injector.ts';
import { FENCES_PATH, serveFences } from './fences.ts';
import { type HealthChecks, healthPath } from './health.ts';
import { acceptsAggregatedDiscovery } from './media.ts';
import { serveOpenApiV2 } from './openapi-v2.ts';
import type { OpenApiV3 } from './openapi-v3.ts';
import { queryBool } from './query.ts';
import { parseRequestPath, type RequestTarget } from './request-info.ts';
import { parseRequestUrl } from './request-url.ts';
import { writeError, writeText, writeValue } from './respond.ts';
import { KUBERNETES_VERSION } from './version.ts';

/** What the top-level handler needs besides the shared server context. */
export interface HandlerContext extends ServerContext {
  readonly openapi: OpenApiV3;
  /** The bearer token; undefined in insecure mode. */
  readonly token: string | undefined;
  /** `host:port` for `serverAddressByClientCIDRs`. */
  readonly serverAddress: () => string;
  /** `/healthz`, `/livez`, `/readyz` and their checks (health.ts). */
  readonly health: HealthChecks;
  /** Fault injection: wraps every request but the admin endpoint's (fault-injector.ts). */
  readonly faults: ServerFaultInjector;
  /** The fault admin endpoint's own token; undefined when the endpoint is not served (404). */
  readonly faultAdminToken: string | undefined;
}

function serveDiscovery(
  ctx: HandlerContext,
  req: IncomingMessage,
  res: ServerResponse,
  target: RequestTarget,
): boolean {
  const url = parseRequestUrl(req.url);
  const pretty = queryBool(url.searchParams, 'pretty') === true;
  const aggregated = acceptsAggregatedDiscovery(req.headers.accept);
  switch (target.kind) {
    case 'version':
      writeValue(res, 200, KUBERNETES_VERSION, { pretty });
      return true;
    case 'health': {
      const path = healthPath(url.pathname);
      if (path === undefined) return false;
      const answer = ctx.health.answer(path.endpoint, path.check, url.searchParams);
      if (answer.failures.length > 0)
        ctx.logger.warn({ endpoint: path.endpoint, failures: answer.failures }, 'Health check failed');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      writeText(res, answer.status, answer.body);
      return true;
    }
    case 'api':
    case 'apis':
      if (aggregated !== undefined) {
        const body = aggregatedDiscovery(ctx.registry, aggregated, target.kind === 'api');
        writeValue(res, 200, body, { pretty, contentType: aggregatedContentType(aggregated) });
      } else {
        const body = target.kind === 'api' ? apiVersions(ctx.serverAddress()) : apiGroupList(ctx.registry);
        writeValue(res, 200, body, { pretty });
      }
      return true;
    case 'group': {
      const body = apiGroupDocument(ctx.registry, target.group);
      if (body === undefined) throw unknownResource();
      writeValue(res, 200, body, { pretty });
      return true;
    }
    case 'group-version': {
      const body = apiResourceList(ctx.registry, target.group, target.version);
      if (body === undefined) throw unknownResource();
      writeValue(res, 200, body, { pretty });
      return true;
    }
    case 'openapi-v2':
    case 'openapi-v3':
    case 'openapi-v3-doc':
    case 'resource':
    case 'unknown':
      return false;
  }
}

/** `/openapi/v3` and its documents; a stale `?hash=` is redirected (301) to the current one. */
function serveOpenApi(
  ctx: HandlerContext,
  req: IncomingMessage,
  res: ServerResponse,
  target: RequestTarget,
): boolean {
  if (target.kind === 'openapi-v3') {
    writeValue(res, 200, ctx.openapi.index());
    return true;
  }
  if (target.kind === 'openapi-v2') {
    serveOpenApiV2(ctx.openapi, req, res);
    return true;
  }
  if (target.kind !== 'openapi-v3-doc') return false;
  const doc = ctx.openapi.document(target.path);
  if (doc === undefined) throw unknownResource();
  const hash = parseRequestUrl(req.url).searchParams.get('hash');
  if (hash !== null && hash !== doc.hash) {
    res.writeHead(301, { Location: `/openapi/v3/${target.path}?hash=${doc.hash}`, 'Content-Length': '0' });
    res.end();
    return true;
  }
  res.writeHead(200, {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(doc.body)),
    'Cache-Control': hash === null ? 'no-cache, private' : 'public, immutable',
    ETag: `"${doc.hash}"`,
  });
  res.end(doc.body);
  return true;
}

/**
 * The server's request handler: authentication, then `/version`, health checks, discovery,
 * OpenAPI v3 and REST resources. Every failure is answered with a `metav1.Status`; a 413 also
 * closes the connection (body.ts reads and discards the refused body first, up to a bound, so
 * the client reads the answer rather than a reset).
 */
export function createRequestHandler(
  ctx: HandlerContext,
): (req: IncomingMessage, res: ServerResponse) => void {
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    // the raw path, never normalised: `…/configmaps/..` is the name `..` (a 400), not the namespace
    const url = parseRequestUrl(req.url);
    const target = parseRequestPath(url.pathname);
    // Fault injection: the admin endpoint when enabled (its own token; never faulted itself), then
    // the active delay and failRatio rules around serving the request (`out` is `res`, or a
    // discarding response when a write is applied before an injected error).
    if (ctx.faultAdminToken !== undefined && isFaultAdminPath(url.pathname)) {
      authenticateFaultAdmin(req, ctx.faultAdminToken, ctx.token);
      const openWatches = (): number => ctx.watches.size;
      await serveFaultAdmin({ faults: ctx.faults, logger: ctx.logger, openWatches }, req, res, url);
      return;
    }
    await authenticate(req, target, ctx.token, ctx.clock.now(), ctx.rbac, liveServiceAccounts(ctx));
    await ctx.faults.around(req, res, url, target, async (out) => {
      if (target.kind === 'resource') {
        await dispatchResource(ctx, req, out, target, url.searchParams);
        return;
      }
      if (url.pathname === FENCES_PATH) {
        await serveFences(ctx.store, req, out);
        return;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') throw methodNotAllowed();
      if (serveDiscovery(ctx, req, out, target) || serveOpenApi(ctx, req, out, target)) return;
      throw unknownResource();
    });
  };
  return (req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) {
        // A streamed response cannot carry a Status any more: cut it so the client sees an error.
        ctx.logger.error({ method: req.method, url: req.url, err: error }, 'Streaming response failed');
        res.destroy();
        return;
      }
      if (error instanceof HttpStatusError && error.status === 413) res.setHeader('Connection', 'close');
      const status = writeError(res, error);
      if (status.code >= 500)
        ctx.logger.error({ method: req.method, url: req.url, err: error }, 'Request failed');
      else if (isFenced(error))
        ctx.logger.warn(
          { method: req.method, url: req.url, fence: error.fence, current: error.current },
          'Refused a write carrying a stale fence',
        );
      else ctx.logger.debug({ method: req.method, url: req.url, code: status.code }, 'Request rejected');
    });
  };
}
