import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@converge/runtime';
import { type AdmissionRoute, type AnswerContext, answerAdmission } from './admission-handler.ts';
import { answerConversion, type ConversionRoute } from './conversion-review.ts';
import { WebhookRequestError } from './errors.ts';
import { isJsonContentType, parseGoDuration, readBody, sendJson, statusBody } from './http-io.ts';
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

/** What a request amounts to, before it is written to a socket (or handed back in process). */
interface Answer {
  readonly status: number;
  readonly body: unknown;
  readonly headers: Record<string, string>;
}

/** One request as {@link answer} sees it: where it goes and how to read its body. */
interface RequestParts {
  readonly url: string;
  readonly method: string | undefined;
  readonly contentType: string | undefined;
  readBody(limit: number): Promise<Buffer>;
}

/**
 * The answer to one request: finds the route by exact path, checks method, content type and body
 * size, parses the JSON and answers the review. Every problem of the request itself is a
 * `metav1.Status` answer (400, 404, 405, 413), logged; anything else rejects (the caller answers 500).
 */
async function answer(request: RequestParts, context: ServeContext): Promise<Answer> {
  const { routes, options, logger, stop } = context;
  const url = request.url;
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  try {
    const route = routes.get(path);
    if (route === undefined) throw new WebhookRequestError(404, `no webhook is served at ${path}`);
    if (request.method !== 'POST') {
      throw new WebhookRequestError(405, `${request.method} is not allowed: webhooks are called with POST`);
    }
    const contentType = request.contentType;
    if (!isJsonContentType(contentType)) {
      throw new WebhookRequestError(400, `contentType=${contentType ?? ''}, expected application/json`);
    }
    const limit =
      route.type === 'conversion' ? options.maxConversionBodyBytes : options.maxAdmissionBodyBytes;
    const body = await request.readBody(limit);
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
    const reviewed =
      route.type === 'conversion'
        ? await answerConversion(route, json, context)
        : await answerAdmission(route, json, context);
    return { status: 200, body: reviewed, headers: {} };
  } catch (error) {
    if (!(error instanceof WebhookRequestError)) throw error;
    logger.warn(
      { code: error.code, status: error.status, path, method: request.method, reason: error.message },
      'Rejected a webhook request',
    );
    const headers: Record<string, string> =
      error.status === 405 ? { Allow: 'POST' } : error.status === 413 ? { Connection: 'close' } : {};
    return { status: error.status, body: statusBody(error.status, error.message), headers };
  }
}

/** Serves one HTTP request (see {@link answer}). */
export async function serveRequest(
  req: IncomingMessage,
  res: ServerResponse,
  context: ServeContext,
): Promise<void> {
  const answered = await answer(
    {
      url: req.url ?? '/',
      method: req.method,
      contentType: req.headers['content-type'],
      readBody: (limit) => readBody(req, limit),
    },
    context,
  );
  sendJson(res, answered.status, answered.body, answered.headers);
}

/**
 * Answers a review handed over in this process (`WebhookServer.localDispatcher`): the same checks
 * and answer as over HTTPS, the body as JSON text both ways, so the caller and the webhook share
 * no object.
 */
export async function answerLocally(
  pathWithQuery: string,
  body: string,
  context: ServeContext,
): Promise<{ readonly status: number; readonly body: string }> {
  const bytes = Buffer.from(body, 'utf8');
  const answered = await answer(
    {
      url: pathWithQuery,
      method: 'POST',
      contentType: 'application/json',
      readBody: (limit) =>
        bytes.length > limit
          ? Promise.reject(
              new WebhookRequestError(413, `the request body is larger than the limit of ${limit} bytes`),
            )
          : Promise.resolve(bytes),
    },
    context,
  );
  return { status: answered.status, body: JSON.stringify(answered.body) };
}
