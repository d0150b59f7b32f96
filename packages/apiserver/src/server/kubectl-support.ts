import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

/** What one kubectl run printed. */
export interface KubectlResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Options of one kubectl run. */
export interface KubectlRun {
  /** Written to stdin (manifests for `apply -f -`). */
  readonly input?: string;
  /** Killed (SIGKILL) after this long: a hang detector. Default 90 000. */
  readonly timeoutMs?: number;
  /** Stopped (SIGTERM) once its stdout matches: for a command that runs until stopped (`--watch`). */
  readonly until?: RegExp;
  /** Called with the whole stdout so far on every chunk. */
  readonly onStdout?: (stdout: string) => void;
}

/** The kubectl on PATH (the dispatcher) or a pinned minor next to it, if installed. */
export function kubectlBinary(minor?: number): string | undefined {
  if (minor === undefined) return 'kubectl';
  for (const dir of ['/usr/lib/google-cloud-sdk/bin', '/usr/bin', '/usr/local/bin']) {
    const path = `${dir}/kubectl.1.${minor}`;
    if (existsSync(path)) return path;
  }
  return undefined;
}

/**
 * Runs kubectl against a kubeconfig with its own cache directory and a request timeout; never
 * hangs: the process is killed after `timeoutMs`.
 */
export function runKubectl(
  binary: string,
  kubeconfig: string,
  cacheDir: string,
  args: readonly string[],
  options: KubectlRun = {},
): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      binary,
      ['--kubeconfig', kubeconfig, '--cache-dir', cacheDir, '--request-timeout=30s', ...args],
      {
        env: { ...process.env, KUBECONFIG: kubeconfig },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      options.onStdout?.(stdout);
      if (options.until?.test(stdout)) child.kill('SIGTERM');
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 90_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}
