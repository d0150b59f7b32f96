import type { IncomingMessage, ServerResponse } from 'node:http';
import { WebhookRequestError } from './errors.ts';

const REASONS: Readonly<Record<number, string>> = {
  400: 'BadRequest',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  413: 'RequestEntityTooLarge',
  500: 'InternalError',
  503: 'ServiceUnavailable',
};

/** Writes `body` as JSON with `status`. Does nothing when the response was already sent. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/**
 * Answers with a `metav1.Status` (what client-go reads from a failed call, so the API server's
 * "failed calling webhook" error carries this message).
 */
export function sendStatus(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, statusBody(status, message), headers);
}

/** The `metav1.Status` of a refused request. */
export function statusBody(status: number, message: string): Record<string, unknown> {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason: REASONS[status] ?? 'Unknown',
    code: status,
  };
}

/** Whether the request's media type is `application/json` (parameters such as charset allowed). */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  return (header.split(';')[0] ?? '').trim().toLowerCase() === 'application/json';
}

/**
 * Reads the body up to `limit` bytes. A body over the limit is refused (413) after reading on,
 * discarding, up to `limit` more bytes, so a client that sent a little too much sees the 413 rather
 * than a reset connection; a `Content-Length` over twice the limit is refused at once. A client that
 * aborts mid-body gives a 400.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const tooLarge = (): WebhookRequestError =>
    new WebhookRequestError(413, `the request body is larger than the limit of ${limit} bytes`);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > 2 * limit) return Promise.reject(tooLarge());
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    const finish = (error: WebhookRequestError | undefined): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      if (error === undefined) resolve(Buffer.concat(chunks, size));
      else reject(error);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        over = true;
        chunks.length = 0;
        if (size > 2 * limit) finish(tooLarge());
      } else chunks.push(chunk);
    };
    const onEnd = (): void => finish(over ? tooLarge() : undefined);
    const onError = (): void => finish(new WebhookRequestError(400, 'the request body could not be read'));
    const onAborted = (): void => finish(new WebhookRequestError(400, 'the client aborted the request'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
};

/**
 * Parses a Go duration (`10s`, `1m30s`, `1.5s`), as the API server writes `?timeout=` on webhook
 * calls. Undefined when it is not one or not positive.
 */
export function parseGoDuration(text: string | null): number | undefined {
  if (text === null || !/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(text)) return undefined;
  let total = 0;
  for (const [, value, , unit] of text.matchAll(/(\d+(\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) {
    total += Number(value) * (UNIT_MS[unit ?? ''] ?? 0);
  }
  return total > 0 && Number.isFinite(total) ? total : undefined;
}
