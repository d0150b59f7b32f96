/**
 * Real NATS servers for tests (not part of the published package).
 *
 * - {@link sharedNatsUrl}: `NATS_URL` (default `nats://127.0.0.1:4222`) if a server with JetStream
 *   answers there; otherwise a private server started once per test file (if `nats-server` is on
 *   PATH). Tests on the shared server use unique bucket names and remove them after.
 * - {@link startPrivateNats}: a `nats-server -js` of its own on a free port with a temporary store
 *   directory, which a fault test may stop, restart (same port, same data), kill, or pause and
 *   resume (SIGSTOP / SIGCONT). Fault tests always use one of these, never the shared server.
 *
 * @module
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** A nats-server process this harness started. */
export interface PrivateNats {
  /** `nats://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and waits for it to exit. */
  stop(): Promise<void>;
  /** Kills the server with SIGKILL and waits for it to exit. */
  kill(): Promise<void>;
  /** Starts it again on the same port with the same JetStream store. */
  restart(): Promise<void>;
  /**
   * Freezes the server with SIGSTOP: its connections stay open but nothing is read, answered or
   * sent (no heartbeats, no pings) until {@link PrivateNats.resume}.
   */
  pause(): void;
  /** Lets a paused server run again (SIGCONT). */
  resume(): void;
  /** Stops it and removes its store directory. */
  dispose(): Promise<void>;
}

/** Whether `nats-server` can be started here. */
export function natsServerAvailable(): boolean {
  const probe = spawnSync('nats-server', ['--version'], { encoding: 'utf8' });
  return probe.status === 0;
}

/** A fresh random suffix for bucket and lease names (`a1b2c3d4`). */
export function uniqueSuffix(): string {
  return randomBytes(4).toString('hex');
}

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function portAnswers(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    // A NATS server greets with `INFO {...}` as soon as the connection opens.
    socket.once('data', (chunk) => done(chunk.toString('utf8').startsWith('INFO ')));
    socket.connect(port, host);
  });
}

function parseUrl(url: string): { host: string; port: number } {
  const parsed = new URL(url.replace(/^nats:/, 'http:'));
  return { host: parsed.hostname, port: parsed.port === '' ? 4222 : Number(parsed.port) };
}

/** Starts a private `nats-server -js` on a free port; see {@link PrivateNats}. */
export async function startPrivateNats(): Promise<PrivateNats> {
  const port = await freePort();
  const storeDir = mkdtempSync(join(tmpdir(), 'converge-nats-'));
  let child: ChildProcess | undefined;
  let stderr = '';

  const start = async (): Promise<void> => {
    stderr = '';
    const proc = spawn('nats-server', ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    proc.stderr?.setEncoding('utf8');
    proc.stderr?.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000);
    });
    child = proc;
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if (proc.exitCode !== null) break;
      if (await portAnswers('127.0.0.1', port, 500)) return;
      await sleep(50);
    }
    proc.kill('SIGKILL');
    throw new Error(`nats-server on port ${port} did not start: ${stderr}`);
  };

  const waitExit = async (proc: ChildProcess, signal: NodeJS.Signals): Promise<void> => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill(signal);
    // A paused (SIGSTOP) server acts on SIGTERM only once it runs again.
    proc.kill('SIGCONT');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };

  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    stop: async () => {
      if (child !== undefined) await waitExit(child, 'SIGTERM');
    },
    kill: async () => {
      if (child !== undefined) await waitExit(child, 'SIGKILL');
    },
    restart: async () => {
      if (child !== undefined) await waitExit(child, 'SIGTERM');
      await start();
    },
    pause: () => {
      child?.kill('SIGSTOP');
    },
    resume: () => {
      child?.kill('SIGCONT');
    },
    dispose: async () => {
      if (child !== undefined) await waitExit(child, 'SIGTERM');
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}

let privateForFile: Promise<PrivateNats> | undefined;

/**
 * The URL of a NATS server with JetStream for tests that do not restart it: `NATS_URL` (default
 * `nats://127.0.0.1:4222`) if it answers, else a private server for this test file (stopped when
 * the process exits). Throws if neither is possible, saying how to get `nats-server`.
 */
export async function sharedNatsUrl(): Promise<string> {
  const url = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
  const { host, port } = parseUrl(url);
  if (await portAnswers(host, port, 1000)) return url;
  if (!natsServerAvailable()) {
    throw new Error(
      `no NATS server answers at ${url} and nats-server is not on PATH (Debian: apt-get install nats-server)`,
    );
  }
  privateForFile ??= startPrivateNats().then((server) => {
    process.once('exit', () => {
      void server.kill();
    });
    return server;
  });
  return (await privateForFile).url;
}
