import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '@converge/runtime';
import { FaultError, FaultErrorCodes } from './fault-errors.ts';
import type { WatchTracker } from './watch-tracker.ts';

/** What a restart works on. */
export interface RestartTarget {
  /** The listening HTTP(S) server (undefined before `listen()`). */
  readonly server: Server | undefined;
  readonly host: string;
  readonly watches: WatchTracker;
  readonly clock: Clock;
  /** True once the API server is being closed for good: the restart then gives up. */
  readonly closing: () => boolean;
}

function restartFailed(message: string, cause?: unknown): FaultError {
  return new FaultError(FaultErrorCodes.RESTART_FAILED, 500, 'InternalError', message, {
    ...(cause === undefined ? {} : { cause }),
  });
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/**
 * Restarts a listener the way a crashed and restarted kube-apiserver looks to its clients: every
 * watch is ended and every connection cut at once (in-flight requests get no answer; a write in
 * flight may or may not have been applied), the port stays closed for `downMs` on the clock
 * (connections refused), then the same server listens again on the same host and port. The store
 * and everything else in the process are untouched, so clients reconnect to the same state.
 */
export async function restartListener(target: RestartTarget, downMs: number): Promise<void> {
  const { server, host, watches, clock, closing } = target;
  const address = server?.address() as AddressInfo | null | undefined;
  if (server === undefined || address == null || closing())
    throw restartFailed('cannot restart: the API server is not listening');
  const { port } = address;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  watches.dropAll();
  server.closeAllConnections();
  await closed;
  if (downMs > 0) await clock.sleep(downMs);
  if (closing()) throw restartFailed('restart abandoned: the API server was closed meanwhile');
  try {
    await listen(server, port, host);
  } catch (error) {
    throw restartFailed(`cannot listen again on ${host}:${port}: ${(error as Error).message}`, error);
  }
  if (closing()) {
    server.close();
    throw restartFailed('restart abandoned: the API server was closed meanwhile');
  }
}
