import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { type ApiServer, createApiServer } from './api-server.ts';
import { type KubectlResult, type KubectlRun, runKubectl } from './kubectl-support.ts';

/** The real kubectl against one embedded API server a test file starts and stops. */
export interface KubectlServer {
  /** The server (after `beforeAll`). */
  server(): ApiServer;
  kubectl(args: readonly string[], options?: KubectlRun): Promise<KubectlResult>;
  /** Runs kubectl, expects exit 0, returns stdout. */
  ok(args: readonly string[], options?: KubectlRun): Promise<string>;
  /** Runs kubectl, expects a non-zero exit, returns stderr. */
  fails(args: readonly string[], options?: KubectlRun): Promise<string>;
}

/**
 * Starts an embedded API server for the calling test file (`beforeAll`, a kubeconfig in a fresh
 * folder named after `prefix`) and stops it with its folder (`afterAll`).
 */
export function useKubectlServer(prefix: string): KubectlServer {
  let dir = '';
  let server: ApiServer | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `converge-${prefix}-`));
    server = createApiServer({ kubeconfigPath: join(dir, 'kubeconfig') });
    await server.listen();
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const kubectl = (args: readonly string[], options?: KubectlRun): Promise<KubectlResult> =>
    runKubectl('kubectl', join(dir, 'kubeconfig'), join(dir, 'cache'), args, options);
  return {
    server: () => {
      if (server === undefined) throw new Error('the kubectl server starts in beforeAll');
      return server;
    },
    kubectl,
    async ok(args, options) {
      const result = await kubectl(args, options);
      expect(result.code, `kubectl ${args.join(' ')}\n${result.stderr}`).toBe(0);
      return result.stdout;
    },
    async fails(args, options) {
      const result = await kubectl(args, options);
      expect(result.code, `kubectl ${args.join(' ')} should fail\n${result.stdout}`).not.toBe(0);
      return result.stderr;
    },
  };
}
