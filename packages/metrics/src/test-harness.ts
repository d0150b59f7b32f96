import { Controller, type ControllerOptions, type Source } from '@converge/runtime';
import { flushMicrotasks, type VirtualClock } from '@converge/runtime/testing';
import { OperationsServer, type OperationsServerOptions } from './server/index.ts';

/** A controller whose source syncs at once; `push(key)` adds a key with a `modified` cause. */
export function pushController(
  clock: VirtualClock,
  options: Omit<ControllerOptions<string>, 'clock' | 'sources'>,
): { controller: Controller<string>; push: (key: string) => void } {
  let push: (key: string) => void = () => {};
  const source: Source<string> = {
    name: 'push',
    start(signal, queue) {
      push = (key) =>
        queue.add(key, {
          cause: { type: 'modified', source: 'push', object: { kind: 'Widget', name: key } },
        });
      return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
  };
  const controller = new Controller<string>({ ...options, clock, sources: [source] });
  return { controller, push: (key) => push(key) };
}

/** An operations server on free loopback ports, started; `stop()` stops it. */
export async function startServer(options: OperationsServerOptions): Promise<{
  server: OperationsServer;
  get: (path: string, init?: RequestInit) => Promise<Response>;
  stop: () => Promise<void>;
}> {
  const server = new OperationsServer({
    metricsBindAddress: '127.0.0.1:0',
    healthProbeBindAddress: '127.0.0.1:0',
    ...options,
  });
  const abort = new AbortController();
  const run = server.start(abort.signal);
  await server.whenListening();
  const get = (path: string, init?: RequestInit): Promise<Response> => {
    const route = path.startsWith('/metrics') ? 'metrics' : path.startsWith('/debug') ? 'debug' : 'health';
    const base = server.url(route);
    if (base === undefined) throw new Error(`${route} is not served`);
    return fetch(`${base}${path}`, init);
  };
  return {
    server,
    get,
    stop: async () => {
      abort.abort();
      await run;
      await flushMicrotasks();
    },
  };
}
