import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate as turn } from 'node:timers/promises';
import { noopLogger, realClock, UnavailableError, type WatchEvent } from '@converge/runtime';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { Transport } from '../http/index.ts';
import { QUEUE_HIGH_BYTES, WatchSession } from './watch-session.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Served {
  readonly url: string;
  /** Bytes the server has handed to its socket so far. */
  written(): number;
  /** Whether the server is waiting for its socket to drain. */
  blocked(): boolean;
  /** Resolves when the server saw the request's connection close. */
  readonly closed: Promise<void>;
}

/** A server answering every request with `write(res)`'s watch stream. */
async function serve(write: (res: ServerResponse, sent: (bytes: number) => void) => void): Promise<Served> {
  let written = 0;
  let blocked = false;
  let onClose: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    onClose = resolve;
  });
  const server = createServer((req, res) => {
    req.socket.on('close', onClose);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.flushHeaders();
    const plain = res.write.bind(res);
    res.write = ((chunk: string | Buffer) => {
      const ok = plain(chunk);
      if (!ok) {
        blocked = true;
        res.once('drain', () => {
          blocked = false;
        });
      }
      return ok;
    }) as typeof res.write;
    write(res, (bytes) => {
      written += bytes;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    written: () => written,
    blocked: () => blocked,
    closed,
  };
}

function session(url: string, options: { signal?: AbortSignal; bookmarks?: boolean } = {}): WatchSession {
  const transport = new Transport({
    config: { server: url, namespace: 'home', tls: {}, auth: { type: 'none' } },
    clock: realClock,
    logger: noopLogger,
    userAgent: 'watch-session-test',
    requestTimeoutMs: 30_000,
    connectTimeoutMs: 10_000,
    keepAliveMs: 1_000,
    execTimeoutMs: 10_000,
    maxRetries: 0,
    maxRetryAfterMs: 0,
  });
  cleanups.push(() => transport.close());
  return new WatchSession({
    transport,
    clock: realClock,
    path: '/api/v1/namespaces/home/configmaps',
    query: { watch: 'true' },
    typeMeta: { apiVersion: 'v1', kind: 'ConfigMap' },
    idleLimitMs: 60_000,
    maxLineBytes: 1024 * 1024,
    bookmarks: options.bookmarks ?? false,
    signal: options.signal,
    onStall: () => {},
  });
}

/** One ADDED line of ConfigMap `i`, padded to about `size` bytes. */
function line(i: number, size = 100): string {
  const object = {
    metadata: { name: `cm-${i}`, namespace: 'home', resourceVersion: String(i + 1) },
    data: {},
  };
  const text = JSON.stringify({ type: 'ADDED', object });
  return `${JSON.stringify({ type: 'ADDED', object: { ...object, data: { pad: 'x'.repeat(Math.max(0, size - text.length - 20)) } } })}\n`;
}

function nameOf(event: WatchEvent): string | undefined {
  return event.type === 'BOOKMARK' ? undefined : event.object.metadata.name;
}

/** Waits (a condition, not a time) until `done()` holds. */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('WatchSession', () => {
  it('stops reading the socket while its consumer is behind, so a fast server is held back by TCP, and loses nothing', async () => {
    const count = 16_000;
    const size = 2_000; // ~32 MB in all: far more than the session's queue and the kernel's buffers
    let total = 0;
    for (let i = 0; i < count; i++) total += line(i, size).length;
    const served = await serve((res, sent) => {
      let i = 0;
      const more = (): void => {
        while (i < count) {
          const text = line(i++, size);
          sent(text.length);
          if (!res.write(text)) {
            res.once('drain', more);
            return;
          }
        }
        res.end();
      };
      more();
    });
    const s = session(served.url);
    await s.open();
    const events = s.events();
    const first = await events.next();
    expect(first.done).toBe(false);
    // The consumer holds its first event: the session fills its queue, pauses the body, and the
    // server's writes stop well short of the end.
    await until(() => s.paused && served.blocked());
    expect(s.queuedBytes).toBeGreaterThanOrEqual(QUEUE_HIGH_BYTES);
    expect(s.queuedBytes).toBeLessThan(QUEUE_HIGH_BYTES + 128 * 1024);
    expect(served.written()).toBeLessThan(total / 2);
    const names = [nameOf((first as IteratorYieldResult<WatchEvent>).value)];
    for await (const event of events) names.push(nameOf(event));
    expect(names).toHaveLength(count);
    expect(names.every((name, i) => name === `cm-${i}`)).toBe(true);
    expect(served.written()).toBe(total);
    expect(s.paused).toBe(false);
  });

  it('hands out the events that came before the connection broke, then a typed error', async () => {
    const served = await serve((res) => {
      res.write(line(0) + line(1) + line(2));
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const s = session(served.url);
    await s.open();
    const names: (string | undefined)[] = [];
    const error = await (async () => {
      for await (const event of s.events()) names.push(nameOf(event));
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(names).toEqual(['cm-0', 'cm-1', 'cm-2']);
    expect(error).toBeInstanceOf(UnavailableError);
  });

  it('ends cleanly when the caller aborts while the consumer waits for bytes, and releases the connection', async () => {
    const served = await serve((res) => {
      res.write(line(0));
    });
    const abort = new AbortController();
    const s = session(served.url, { signal: abort.signal });
    await s.open();
    const events = s.events();
    expect((await events.next()).done).toBe(false);
    const waiting = events.next();
    await turn();
    abort.abort();
    expect(await waiting).toEqual({ done: true, value: undefined });
    expect(await events.next()).toEqual({ done: true, value: undefined });
    await served.closed;
  });

  it('answers overlapping next() calls in order, then done after the last event', async () => {
    const served = await serve((res) => {
      res.write(line(0));
      setTimeout(() => res.end(line(1) + line(2)), 20);
    });
    const s = session(served.url);
    await s.open();
    const events = s.events();
    const results = await Promise.all([
      events.next(),
      events.next(),
      events.next(),
      events.next(),
      events.next(),
    ]);
    expect(results.map((r) => (r.done === true ? 'done' : nameOf(r.value)))).toEqual([
      'cm-0',
      'cm-1',
      'cm-2',
      'done',
      'done',
    ]);
  });

  it('refuses a second iteration of one session rather than splitting its events between two', async () => {
    const served = await serve((res) => {
      res.end(line(0));
    });
    const s = session(served.url);
    await s.open();
    const events = s.events();
    expect(() => s.events()).toThrow('already called');
    expect((await events.next()).done).toBe(false);
    expect(await events.next()).toEqual({ done: true, value: undefined });
  });

  it('closes the connection when the consumer leaves the loop early', async () => {
    const served = await serve((res) => {
      res.write(line(0) + line(1) + line(2));
    });
    const s = session(served.url);
    await s.open();
    for await (const event of s.events()) {
      expect(nameOf(event)).toBe('cm-0');
      break;
    }
    await served.closed;
  });

  it('gives the same events however the stream is cut into chunks and however slowly it is consumed', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 2_000 }), { minLength: 1, maxLength: 20 }),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 20 }),
        fc.boolean(),
        async (cuts, holds, bookmarks) => {
          const count = 60;
          let text = '';
          for (let i = 0; i < count; i++) {
            text += line(i, 50 + ((i * 37) % 400));
            if (i % 7 === 0)
              text += `${JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: String(i + 1) } } })}\r\n\n`;
          }
          // A multi-byte character in a value, which a cut may split.
          text += `${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'cm-é€', namespace: 'home', resourceVersion: '999' } } })}`;
          const bytes = Buffer.from(text);
          const served = await serve((res) => {
            let at = 0;
            let n = 0;
            const next = (): void => {
              if (at >= bytes.length) {
                res.end();
                return;
              }
              const end = Math.min(bytes.length, at + (cuts[n++ % cuts.length] as number));
              res.write(bytes.subarray(at, end));
              at = end;
              setImmediate(next);
            };
            next();
          });
          const s = session(served.url, { bookmarks });
          await s.open();
          const seen: string[] = [];
          let n = 0;
          for await (const event of s.events()) {
            seen.push(event.type === 'BOOKMARK' ? `@${event.resourceVersion}` : (nameOf(event) as string));
            for (let k = holds[n++ % holds.length] as number; k > 0; k--) await turn();
          }
          const expected: string[] = [];
          for (let i = 0; i < count; i++) {
            expected.push(`cm-${i}`);
            if (bookmarks && i % 7 === 0) expected.push(`@${i + 1}`);
          }
          expected.push('cm-é€');
          expect(seen).toEqual(expected);
          for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
        },
      ),
      { numRuns: 25 },
    );
  });
});
