import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock, Logger, Timer } from '@converge/runtime';
import type { Metrics } from '../metrics.ts';
import { type CounterSample, type DashboardQuery, dashboardSnapshot } from './dashboard-snapshot.ts';

export interface DashboardStreamsOptions {
  readonly metrics: Metrics | undefined;
  /** The manager's leadership, when the server has one (its `leading`). */
  readonly leading: () => boolean | undefined;
  /** How often each stream takes a snapshot; it is sent when it differs from the last one sent. */
  readonly intervalMs: number;
  /** A comment line after this long without a snapshot, so that proxies keep the stream open. */
  readonly heartbeatMs: number;
  /** Streams open at once; one more gets 503. */
  readonly maxClients: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * The open `/debug/events` streams (Server-Sent Events). Each takes a snapshot every
 * `intervalMs` and sends it (event `snapshot`, data: one `DashboardSnapshot` JSON line) when
 * it changed, else a `: heartbeat` comment every `heartbeatMs`. A stream ends when its client
 * goes, when a snapshot fails, or on {@link closeAll} (the server stopping). A client that reads
 * slower than snapshots come skips them (nothing queues up in memory for it); a snapshot that took
 * long (many keys) spaces the next ones out, to at most a fifth of the event loop's time.
 */
export class DashboardStreams {
  readonly #options: DashboardStreamsOptions;
  readonly #open = new Set<() => void>();
  /** The newest counter sample of any stream: a new stream's first rates are since then. */
  #recent: CounterSample | undefined;

  constructor(options: DashboardStreamsOptions) {
    this.#options = options;
  }

  /** Streams open now. */
  get size(): number {
    return this.#open.size;
  }

  /** Whether one more stream may open. */
  get full(): boolean {
    return this.#open.size >= this.#options.maxClients;
  }

  /** Answers `req` with a stream of the snapshots `query` asks for, until one of the ends above. */
  serve(req: IncomingMessage, res: ServerResponse, query: DashboardQuery): void {
    const { clock, intervalMs, heartbeatMs, metrics, leading, logger } = this.#options;
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('X-Accel-Buffering', 'no');
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    res.flushHeaders();
    res.write('retry: 2000\n\n');
    let timer: Timer | undefined;
    let closed = false;
    const recent = this.#recent;
    const age = recent === undefined ? 0 : clock.now() - recent.at;
    let previous = age >= 100 && age <= 10 * intervalMs ? recent : undefined;
    let lastSent = '';
    let lastWrite = clock.now();
    let id = 0;
    const close = (): void => {
      if (closed) return;
      closed = true;
      timer?.cancel();
      this.#open.delete(close);
      if (!res.writableEnded) res.end();
    };
    this.#open.add(close);
    res.on('close', close);
    const tick = async (): Promise<void> => {
      if (closed) return;
      const now = clock.now();
      if (!res.writableNeedDrain) {
        const { snapshot, sample } = await dashboardSnapshot(metrics, leading(), query, now, previous);
        previous = sample;
        this.#recent = sample;
        const { now: _at, ...content } = snapshot;
        const text = JSON.stringify(content);
        if (closed) return;
        if (text !== lastSent) {
          lastSent = text;
          lastWrite = now;
          id++;
          res.write(`event: snapshot\nid: ${id}\ndata: ${JSON.stringify(snapshot)}\n\n`);
        } else if (now - lastWrite >= heartbeatMs) {
          lastWrite = now;
          res.write(': heartbeat\n\n');
        }
      }
      // A snapshot walks every key of the queues (100 000 keys: a few hundred ms): wait at least
      // four times what this one cost, so that a stream never takes more than a fifth of the loop.
      // The cost is read on the stream's clock: on a virtual clock it is 0 and the interval exact
      // (real time here once made a loaded test's next snapshot come later than it advanced).
      timer = clock.setTimer(run, Math.max(intervalMs, 4 * (clock.now() - now)));
    };
    const run = (): void => {
      tick().catch((error: unknown) => {
        logger.error({ err: error }, 'Dashboard snapshot failed');
        close();
      });
    };
    run();
  }

  /** Ends every open stream (the server stops). */
  closeAll(): void {
    for (const close of [...this.#open]) close();
  }
}
