import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@converge/runtime';
import { type AdmissionRoute, type AnswerContext, answerAdmission } from './admission-handler.ts';
import { answerConversion, type ConversionRoute } from './conversion-review.ts';
import { WebhookRequestError } from './errors.ts';
import { isJsonContentType, parseGoDuration, readBody, sendJson, sendStatus } from './http-io.ts';
import type { ResolvedWebhookServerOptions } from './options.ts';
import { messageOf } from './settle.ts';

/** What serving one request needs. */
export interface ServeContext {
  readonly routes: ReadonlyMap<string, AdmissionRoute | ConversionRoute>;
  readonly options: ResolvedWebhookServerOptions;
  readonly logger: Logger;
  /** Aborts when the server stops (after the shutdown grace). */
  readonly stop: AbortSignal;
}

/**
 * Serves one request: finds the route by exact path, checks method, content type and body size,
 * parses the JSON and answers the review. Every problem of the request itself is answered with a
 * `metav1.Status` (400, 404, 405, 413) and logged; anything else rejects (the caller answers 500).
 */
export async function serveRequest(
  req: IncomingMessage,
  res: ServerResponse,
  context: ServeContext,
): Promise<void> {
  const { routes, options, logger, stop } = context;
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  try {
    const route = routes.get(path);
    if (route === undefined) throw new WebhookRequestError(404, `no webhook is served at ${path}`);
    if (req.method !== 'POST') {
      throw new WebhookRequestError(405, `${req.method} is not allowed: webhooks are called with POST`);
    }
    const contentType = req.headers['content-type'];
    if (!isJsonContentType(contentType)) {
      throw new WebhookRequestError(400, `contentType=${contentType ?? ''}, expected application/json`);
    }
    const limit =
      route.type === 'conversion' ? options.maxConversionBodyBytes : options.maxAdmissionBodyBytes;
    const body = await readBody(req, limit);
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch (error) {
      throw new WebhookRequestError(400, `the body is not JSON: ${messageOf(error)}`);
    }
    const asked = parseGoDuration(new URLSearchParams(q < 0 ? '' : url.slice(q + 1)).get('timeout'));
    const context: AnswerContext = {
      timeoutMs: Math.min(options.timeoutMs, asked ?? Number.POSITIVE_INFINITY),
      clock: options.clock,
      logger: logger.child({ webhook: path }),
      stop,
    };
    const answer =
      route.type === 'conversion'
        ? await answerConversion(route, json, context)
        : await answerAdmission(route, json, context);
    sendJson(res, 200, answer);
  } catch (error) {
    if (!(error instanceof WebhookRequestError)) throw error;
    logger.warn(
      { code: error.code, status: error.status, path, method: req.method, reason: error.message },
      'Rejected a webhook request',
    );
    const headers: Record<string, string> =
      error.status === 405 ? { Allow: 'POST' } : error.status === 413 ? { Connection: 'close' } : {};
    sendStatus(res, error.status, error.message, headers);
  }
}
