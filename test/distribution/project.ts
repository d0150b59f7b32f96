/**
 * A user's project outside the repository, for the distribution test: the packed tarballs
 * installed into a fresh folder, commands run in it on a chosen Node (its folder first on PATH,
 * as a Node version manager would put it), long-running commands awaited on their output.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { onceAcrossProcesses } from '../once.ts';

const exec = promisify(execFile);
/** How long one command may take; installs from a cold npm cache are the slowest. */
export const COMMAND_MS = 240_000;
/** How long a started server may take to print its first line, or an object to appear. */
export const WAIT_MS = 60_000;

export interface Ran {
  readonly stdout: string;
  readonly stderr: string;
}

/** The environment for commands on `node`: its folder first on PATH, no inherited npm/vitest state. */
export function envFor(node: string, extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(npm_|VITEST|NODE_OPTIONS$|INIT_CWD$)/.test(name)) continue;
    env[name] = value;
  }
  env.PATH = `${dirname(node)}:${process.env.PATH ?? ''}`;
  return { ...env, ...extra };
}

/** Runs a command to its end; throws with its output when it fails. */
export async function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<Ran> {
  try {
    const { stdout, stderr } = await exec(command, args, {
      ...options,
      timeout: COMMAND_MS,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { stdout, stderr };
  } catch (error) {
    const e = error as Error & { stdout?: string; stderr?: string };
    throw new Error(
      `${command} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`,
    );
  }
}

/** A command left running (a server, an operator): its output so far, its exit, a stop. */
export interface Running {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
  /** Resolves with the first output line matching `pattern` (its match), or throws after {@link WAIT_MS}. */
  line(pattern: RegExp): Promise<RegExpMatchArray>;
  /** SIGINT to its whole process group (SIGKILL after {@link WAIT_MS}), then its exit. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started = new Set<Running>();

/** Stops every command {@link start} left running (for an `afterAll`, so a failed test leaks nothing). */
export async function stopAll(): Promise<void> {
  await Promise.all([...started].map((r) => r.stop()));
}

export function start(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Running {
  // Its own process group, so a stop reaches npx and what it started, as Ctrl-C in a terminal does.
  const child = spawn(command, args, { ...options, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const waiters = new Set<() => void>();
  const collect = (chunk: Buffer): void => {
    output += chunk.toString();
    for (const wake of waiters) wake();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    // 'close', not 'exit': what it printed last may still be in its pipes when it exits.
    child.once('close', (code, signal) => {
      resolve({ code, signal });
      for (const wake of waiters) wake();
    });
  });
  let ended = false;
  void exited.then(() => {
    ended = true;
  });
  const running: Running = {
    child,
    exited,
    output: () => output,
    line: (pattern) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no line matching ${pattern} within ${WAIT_MS} ms:\n${output}`));
        }, WAIT_MS);
        function check(): void {
          const match = output.match(pattern);
          if (match === null && !ended) return;
          clearTimeout(timer);
          waiters.delete(check);
          if (match === null) reject(new Error(`${command} exited before printing ${pattern}:\n${output}`));
          else resolve(match);
        }
        waiters.add(check);
        check();
      }),
    stop: async () => {
      signalGroup(child, 'SIGINT');
      const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), WAIT_MS);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
        signalGroup(child, 'SIGKILL'); // nothing of the group outlives the test
        started.delete(running);
      }
    },
  };
  started.add(running);
  return running;
}

/** Sends `signal` to the process group `child` leads; a group already gone is fine. */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/**
 * The Node binary of `version` from the `node` package on npm (the same package the repository
 * pins its own Node 24 with), installed once into `cacheDir`.
 */
export async function installNode(
  version: string,
  cacheDir: string,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const dir = join(cacheDir, `node-${version}`);
  const binary = join(dir, 'node_modules', 'node', 'bin', 'node');
  mkdirSync(cacheDir, { recursive: true });
  // The distribution and scaffold tests may ask at once: one installs, the other waits for it.
  await onceAcrossProcesses(
    `${dir}.installing`,
    () =>
      existsSync(binary) &&
      execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim() === `v${version}`,
    async () => {
      mkdirSync(dir, { recursive: true });
      await run(
        'npm',
        ['install', '--prefix', dir, '--no-save', '--no-audit', '--no-fund', `node@${version}`],
        {
          cwd: dir,
          env,
        },
      );
    },
    COMMAND_MS,
  );
  return binary;
}

/** The oldest Node a package's `engines` allows (`>=22.18` → `22.18.0`). */
export function oldestNode(packageJson: string): string {
  const { engines } = JSON.parse(readFileSync(packageJson, 'utf8')) as { engines?: { node?: string } };
  const match = /^>=\s*(\d+)\.(\d+)(?:\.(\d+))?$/.exec(engines?.node ?? '');
  if (match === null)
    throw new Error(`${packageJson}: engines.node is not of the form >=X.Y: ${engines?.node}`);
  return `${match[1]}.${match[2]}.${match[3] ?? '0'}`;
}
