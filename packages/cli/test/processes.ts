/**
 * Child processes for CLI tests: `converge` started with the Node running the test, its output
 * kept, its exit awaited; and bounded waits for conditions.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/converge.js', import.meta.url));
/** The tail of a process's output that is kept, for error messages. */
const OUTPUT_KEPT = 16_384;
/**
 * How long a wait may take by default: a hang detector, not a bound on speed. `converge serve`
 * starts in under a second alone, and took over 30 s with a second copy of the suite running
 * beside this one (load ~20 on 2 cores).
 */
export const WAIT_MS = 120_000;

/** Wall-clock milliseconds with sub-millisecond resolution, comparable between processes on one machine. */
export const now = (): number => performance.timeOrigin + performance.now();

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** When this process saw the exit ({@link now}). */
  readonly at: number;
}

export interface ConvergeProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<Exit>;
  /** The last {@link OUTPUT_KEPT} characters of stdout and stderr, interleaved. */
  output(): string;
  /** The last {@link OUTPUT_KEPT} characters of stdout alone. */
  stdout(): string;
  /** The last {@link OUTPUT_KEPT} characters of stderr alone. */
  stderr(): string;
}

/**
 * What every test process gets unless `env` says otherwise: no health probe server on `:8081`
 * (`converge run`'s default), which replicas started side by side would each try to bind.
 */
export const TEST_ENV: Readonly<Record<string, string>> = { CONVERGE_HEALTH_PROBE_BIND_ADDRESS: '0' };

/**
 * Starts `converge …args` in `cwd`, with {@link TEST_ENV} and `env` added to this process's
 * environment.
 */
export function spawnConverge(
  cwd: string,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
  /** How much of each stream to keep (a whole JSON document a test parses may be longer). */
  kept: number = OUTPUT_KEPT,
): ConvergeProcess {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { ...process.env, ...TEST_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-kept);
    stdout = (stdout + chunk.toString()).slice(-kept);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-kept);
    stderr = (stderr + chunk.toString()).slice(-kept);
  });
  const exited = new Promise<Exit>((resolve) => {
    // Timed at 'exit', settled at 'close': what the process printed last (an error, "converge:
    // stopped") may still be in its pipes when it exits, and a test reads the output next.
    let exit: Exit | undefined;
    child.once('exit', (code, signal) => {
      exit = { code, signal, at: now() };
    });
    child.once('close', (code, signal) => resolve(exit ?? { code, signal, at: now() }));
    child.once('error', (error) => {
      output += `\nspawn failed: ${error.message}`;
      resolve({ code: null, signal: null, at: now() });
    });
  });
  return { child, exited, output: () => output, stdout: () => stdout, stderr: () => stderr };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function timedOut(what: string, context: () => string): Error {
  return new Error(`timed out after ${WAIT_MS} ms waiting for ${what}\n${context()}`);
}

/** Polls `probe` every 20 ms until it returns a value; throws after {@link WAIT_MS} with `context()` in the message. */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined,
  context: () => string,
): Promise<T> {
  const deadline = now() + WAIT_MS;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (now() > deadline) throw timedOut(what, context);
    await sleep(20);
  }
}

/** Resolves as `promise` does, or throws after {@link WAIT_MS} with `context()` in the message. */
export async function within<T>(what: string, promise: Promise<T>, context: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut(what, context)), WAIT_MS);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Calls `probe` every 100 ms (a request, each) until it resolves to a value; throws after
 * {@link WAIT_MS} with `context()` in the message.
 */
export async function pollFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  context: () => string,
): Promise<T> {
  const deadline = now() + WAIT_MS;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (now() > deadline) throw timedOut(what, context);
    await sleep(100);
  }
}

/**
 * The complete JSON lines of a log a child process appends to (a line still being written is left
 * for the next read); none if the file does not exist yet.
 */
export function readJsonLines<T>(file: string): T[] {
  if (!existsSync(file)) return [];
  const text = readFileSync(file, 'utf8');
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as T);
}
