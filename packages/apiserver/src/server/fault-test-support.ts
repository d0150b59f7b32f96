/**
 * Helpers shared by the fault-injection tests (not part of the package's API).
 *
 * @module
 */
import type { TestServer } from './test-support.ts';

/**
 * Requests to the fault admin endpoint with the fault admin token (not the API's), for the server
 * `server()` returns when called (tests assign theirs in `beforeAll`).
 */
export function faultAdminClient(
  server: () => TestServer,
): (path: string, init?: Parameters<TestServer['request']>[1]) => ReturnType<TestServer['request']> {
  return (path, init = {}) => {
    const t = server();
    return t.request(path, { token: t.server.faultAdminToken as string, ...init });
  };
}

/** Polls `check` every 10 ms (real time) until it holds; rejects after `timeoutMs`. */
export async function eventually(check: () => boolean, timeoutMs = 8_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Runs `attempt` until it resolves, as a client retries after a restart (a pooled keep-alive
 * connection may still be found dead, or the port still be closed); rejects with the last error
 * after `timeoutMs`.
 */
export async function retrying<T>(attempt: () => Promise<T>, timeoutMs = 8_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/** Settles-state of a promise, for asserting that a held request has not been answered yet. */
export function track<T>(promise: Promise<T>): {
  readonly settled: () => boolean;
  readonly promise: Promise<T>;
} {
  let settled = false;
  const tracked = promise.finally(() => {
    settled = true;
  });
  return { settled: () => settled, promise: tracked };
}
