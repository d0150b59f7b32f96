import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ApiServer, createApiServer } from '../../packages/apiserver/src/server/api-server.ts';

/** One embedded API server with its kubeconfig in a temporary directory; one per test file. */
export interface CompatServer {
  readonly dir: string;
  readonly kubeconfig: string;
  readonly server: ApiServer;
  close(): Promise<void>;
}

export async function startCompatServer(prefix: string): Promise<CompatServer> {
  const dir = mkdtempSync(join(tmpdir(), `converge-compat-${prefix}-`));
  const kubeconfig = join(dir, 'kubeconfig');
  const server = createApiServer({ kubeconfigPath: kubeconfig });
  await server.listen();
  return {
    dir,
    kubeconfig,
    server,
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** What a process printed, and its exit code (never rejects on a non-zero exit). */
export interface ProcessResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a real process without blocking the event loop (the server answers it from this process). */
export function run(
  command: string,
  args: readonly string[],
  options: { readonly env?: NodeJS.ProcessEnv; readonly timeoutMs?: number } = {},
): Promise<ProcessResult> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { encoding: 'utf8', timeout: options.timeoutMs ?? 30_000, env: options.env ?? process.env },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({
          code,
          stdout,
          stderr: error !== null && code === -1 ? `${stderr}${error.message}` : stderr,
        });
      },
    );
  });
}
