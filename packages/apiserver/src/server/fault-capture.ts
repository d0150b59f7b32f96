import { type IncomingMessage, ServerResponse } from 'node:http';
import { Writable } from 'node:stream';

/**
 * Runs a request's handler against a response that goes nowhere, for `phase: 'after'` failures:
 * the handler reads the real request and applies the write, its answer is thrown away (a real
 * `ServerResponse` on a socket that discards, so streamed and single responses both complete), and
 * the caller answers the injected error instead. Rejects with the handler's own error when it fails
 * — then nothing was applied and the real error is the answer. Resolves with the discarded status.
 */
export async function runDiscarded(
  req: IncomingMessage,
  handler: (res: ServerResponse) => Promise<void>,
): Promise<number> {
  const sink = new Writable({
    write(_chunk, _encoding, callback) {
      callback();
    },
  });
  const res = new ServerResponse(req);
  // assignSocket wants a net.Socket; the response only writes to it, corks it and listens for close.
  res.assignSocket(sink as unknown as Parameters<ServerResponse['assignSocket']>[0]);
  try {
    await handler(res);
    return res.statusCode;
  } finally {
    res.detachSocket(sink as unknown as Parameters<ServerResponse['detachSocket']>[0]);
    sink.destroy();
  }
}
