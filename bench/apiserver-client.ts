/**
 * The client process of `apiserver.bench.ts`: spawned with `process.execPath` so reading, counting
 * and checking responses never runs on the server's event loop. It takes requests over the IPC
 * channel (see apiserver-protocol.ts) and answers each with its measurements; all times are taken
 * here, on one clock. Not meant to be run by hand.
 */
import { createHash } from 'node:crypto';
import { Agent, type IncomingMessage, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import {
  type ChangesReply,
  type ChangesRequest,
  type CreatesReply,
  type CreatesRequest,
  configMapBody,
  type Envelope,
  type ListReply,
  type ListRequest,
  type ReplyEnvelope,
  type Target,
  type WatchCloseReply,
  type WatchOpenReply,
  type WatchOpenRequest,
} from './apiserver-protocol.ts';

const HOST = '127.0.0.1';
const UID_MARKER = Buffer.from('"uid":"');
const SEQ_MARKER = '"seq":"';

/**
 * One keep-alive connection for sequential requests (creates, PUTs); a LIST opens its own. Each
 * timed phase starts on a new one ({@link freshWriteAgent}): a connection left idle through an
 * earlier phase may have been closed by the server's 5 s keep-alive timeout while this process was
 * busy parsing a large LIST, and reusing it fails with ECONNRESET (seen at load 10).
 */
let writeAgent = new Agent({ keepAlive: true, maxSockets: 1 });

function freshWriteAgent(): void {
  writeAgent.destroy();
  writeAgent = new Agent({ keepAlive: true, maxSockets: 1 });
}

function headers(target: Target, extra: Record<string, string> = {}): Record<string, string> {
  return target.token === undefined ? extra : { ...extra, authorization: `Bearer ${target.token}` };
}

function countMarker(buffer: Buffer): number {
  let count = 0;
  let at = buffer.indexOf(UID_MARKER);
  while (at >= 0) {
    count++;
    at = buffer.indexOf(UID_MARKER, at + UID_MARKER.length);
  }
  return count;
}

function list(msg: ListRequest): Promise<ListReply> {
  return new Promise<ListReply>((resolve, reject) => {
    const started = performance.now();
    let firstByteMs = -1;
    let bytes = 0;
    let uids = 0;
    // The last bytes of the previous chunk, to count a marker split across two chunks.
    let tail: Buffer = Buffer.alloc(0);
    const hash = msg.verify ? createHash('sha256') : undefined;
    const chunks: Buffer[] = [];
    const req = request(
      {
        host: HOST,
        port: msg.target.port,
        path: msg.path,
        headers: headers(msg.target, { accept: 'application/json' }),
        agent: false,
      },
      (res: IncomingMessage) => {
        res.on('data', (chunk: Buffer) => {
          if (firstByteMs < 0) firstByteMs = performance.now() - started;
          bytes += chunk.length;
          uids += countMarker(chunk);
          const head = chunk.subarray(0, UID_MARKER.length - 1);
          if (tail.length > 0) uids += countMarker(Buffer.concat([tail, head]));
          tail = chunk.subarray(Math.max(0, chunk.length - (UID_MARKER.length - 1)));
          if (hash !== undefined) {
            hash.update(chunk);
            chunks.push(chunk);
          }
        });
        res.on('error', reject);
        res.on('end', () => {
          const ms = performance.now() - started;
          const reply: ListReply = { status: res.statusCode ?? 0, bytes, ms, firstByteMs, uids };
          if (hash === undefined) {
            resolve(reply);
            return;
          }
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
            kind?: unknown;
            items?: { metadata?: { namespace?: string; name?: string } }[];
          };
          const items = Array.isArray(body.items) ? body.items : [];
          const names = new Set(items.map((i) => `${i.metadata?.namespace}/${i.metadata?.name}`));
          resolve({
            ...reply,
            sha256: hash.digest('hex'),
            parsed: { kind: String(body.kind), items: items.length, distinctNames: names.size },
          });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** One request over the keep-alive write connection; resolves with the status and body. */
function send(
  target: Target,
  method: string,
  path: string,
  body: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: HOST,
        port: target.port,
        method,
        path,
        headers: headers(target, {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          accept: 'application/json',
        }),
        agent: writeAgent,
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (chunk: Buffer) => parts.push(chunk));
        res.on('error', reject);
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8') }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function creates(msg: CreatesRequest): Promise<CreatesReply> {
  // Bodies are made before the clock starts: the client's own work stays out of the figure.
  const bodies = Array.from({ length: msg.count }, (_, i) =>
    configMapBody(msg.namespace, `${msg.namePrefix}-${i}`, i),
  );
  let failures = 0;
  let firstFailure: string | undefined;
  freshWriteAgent();
  const started = performance.now();
  for (const body of bodies) {
    const { status, text } = await send(msg.target, 'POST', msg.path, body);
    if (status !== 201) {
      failures++;
      firstFailure ??= `${status} ${text.slice(0, 300)}`;
    }
  }
  const ms = performance.now() - started;
  return firstFailure === undefined ? { ms, failures } : { ms, failures, firstFailure };
}

// ---------------------------------------------------------------------------------------------
// Watches

interface Watch {
  readonly req: ReturnType<typeof request>;
  /** Complete event lines received since the last check. */
  lines: string[];
  partial: string;
  ended: boolean;
}

const watches: Watch[] = [];

/** The change being waited for: its seq, how many watches have seen it, when the first did. */
let pending: { seq: number; seen: number; firstAt: number; done: (lastAt: number) => void } | undefined;
const stray: string[] = [];

function seqOf(line: string): number {
  const at = line.indexOf(SEQ_MARKER);
  if (at < 0) return -1;
  return Number(line.slice(at + SEQ_MARKER.length, line.indexOf('"', at + SEQ_MARKER.length)));
}

function onWatchData(watch: Watch, chunk: string): void {
  const now = performance.now();
  let text = watch.partial + chunk;
  let nl = text.indexOf('\n');
  while (nl >= 0) {
    const line = text.slice(0, nl);
    text = text.slice(nl + 1);
    nl = text.indexOf('\n');
    if (line === '') continue;
    watch.lines.push(line);
    const seq = seqOf(line);
    if (pending === undefined || seq !== pending.seq) {
      if (stray.length < 5)
        stray.push(`unexpected event (waiting for ${pending?.seq}): ${line.slice(0, 200)}`);
      continue;
    }
    if (pending.seen === 0) pending.firstAt = now;
    pending.seen++;
    if (pending.seen === watches.length) pending.done(now);
  }
  watch.partial = text;
}

function openWatches(msg: WatchOpenRequest): Promise<WatchOpenReply> {
  const opening: Promise<void>[] = [];
  for (let i = 0; i < msg.count; i++) {
    opening.push(
      new Promise<void>((resolve, reject) => {
        const req = request(
          {
            host: HOST,
            port: msg.target.port,
            path: msg.path,
            headers: headers(msg.target, { accept: 'application/json' }),
            agent: false,
          },
          (res) => {
            if (res.statusCode !== 200) {
              reject(new Error(`watch answered ${res.statusCode}`));
              res.resume();
              return;
            }
            const watch: Watch = { req, lines: [], partial: '', ended: false };
            watches.push(watch);
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => onWatchData(watch, chunk));
            res.on('end', () => {
              watch.ended = true;
            });
            res.on('error', () => undefined);
            resolve();
          },
        );
        req.on('error', reject);
        req.end();
      }),
    );
  }
  return Promise.all(opening).then(() => ({ opened: watches.length }));
}

/** Checks what every watch received during one sequence of changes, then forgets it. */
function checkReceived(msg: ChangesRequest): string[] {
  const problems = [...stray];
  stray.length = 0;
  watches.forEach((watch, w) => {
    const expected = msg.watched ? msg.changes : 0;
    if (watch.lines.length !== expected) {
      problems.push(`watch ${w} received ${watch.lines.length} events, expected ${expected}`);
    }
    watch.lines.forEach((line, i) => {
      const event = JSON.parse(line) as {
        type?: string;
        object?: { metadata?: { name?: string; namespace?: string }; data?: { seq?: string } };
      };
      const seq = Number(event.object?.data?.seq);
      if (
        event.type !== 'MODIFIED' ||
        event.object?.metadata?.name !== msg.name ||
        event.object.metadata.namespace !== msg.namespace ||
        seq !== msg.firstSeq + i
      ) {
        if (problems.length < 10) problems.push(`watch ${w} event ${i}: ${line.slice(0, 200)}`);
      }
    });
    watch.lines = [];
  });
  return problems;
}

async function changes(msg: ChangesRequest): Promise<ChangesReply> {
  const allMs: number[] = [];
  const firstMs: number[] = [];
  const putMs: number[] = [];
  const problems: string[] = [];
  const bodies = Array.from({ length: msg.changes }, (_, i) =>
    configMapBody(msg.namespace, msg.name, msg.firstSeq + i),
  );
  const started = performance.now();
  for (let i = 0; i < msg.changes; i++) {
    const seq = msg.firstSeq + i;
    let delivered: Promise<number> | undefined;
    if (msg.watched) {
      delivered = new Promise<number>((resolve) => {
        pending = { seq, seen: 0, firstAt: 0, done: resolve };
      });
    }
    const sentAt = performance.now();
    const put = send(msg.target, 'PUT', msg.path, bodies[i] as string).then((r) => {
      putMs.push(performance.now() - sentAt);
      if (r.status !== 200 && problems.length < 10) problems.push(`PUT ${seq}: ${r.status} ${r.text}`);
    });
    if (delivered !== undefined) {
      const timeout = setTimeout(() => pending?.done(Number.NaN), 10_000);
      const lastAt = await delivered;
      clearTimeout(timeout);
      const state = pending;
      if (Number.isNaN(lastAt) || state === undefined) {
        problems.push(`change ${seq}: only ${state?.seen ?? 0} of ${watches.length} watches received it`);
        await put;
        break;
      }
      allMs.push(lastAt - sentAt);
      firstMs.push(state.firstAt - sentAt);
    }
    await put;
  }
  const totalMs = performance.now() - started;
  pending = undefined;
  return { allMs, firstMs, putMs, totalMs, problems: [...problems, ...checkReceived(msg)] };
}

function closeWatches(): WatchCloseReply {
  const closed = watches.filter((w) => w.ended).length;
  for (const watch of watches) watch.req.destroy();
  watches.length = 0;
  return { closed };
}

async function handle(msg: Envelope): Promise<unknown> {
  switch (msg.op) {
    case 'list':
      return list(msg);
    case 'creates':
      return creates(msg);
    case 'watch-open':
      return openWatches(msg);
    case 'changes':
      return changes(msg);
    case 'watch-close':
      return closeWatches();
  }
}

process.on('message', (msg: Envelope) => {
  handle(msg).then(
    (reply) => process.send?.({ id: msg.id, reply } satisfies ReplyEnvelope),
    (error: unknown) =>
      process.send?.({
        id: msg.id,
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      } satisfies ReplyEnvelope),
  );
});
process.on('disconnect', () => {
  writeAgent.destroy();
  closeWatches();
});
