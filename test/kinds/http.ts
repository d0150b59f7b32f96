/** Requests to an embedded API server over HTTPS with its CA and token, for the kinds tests. */
import { request } from 'node:https';
import type { ApiServer } from '../../packages/apiserver/src/server/api-server.ts';

export interface Response {
  readonly status: number;
  readonly body: unknown;
}

/** One request: `body` sent as JSON, the answer parsed as JSON (undefined when empty). */
export function call(server: ApiServer, method: string, path: string, body?: unknown): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, server.url),
      {
        method,
        ca: server.ca,
        headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text) }),
        );
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** Polls until the new resource is served (a CRD is established asynchronously), for `withinMs` at most. */
export async function served(server: ApiServer, path: string, withinMs = 10_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const { status } = await call(server, 'GET', path);
    if (status === 200) return;
    if (Date.now() > deadline) throw new Error(`${path} not served within ${withinMs} ms: ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
