/**
 * Test support for the example operators (not an operator itself): each test runs its operator as
 * `converge run` would — a {@link Manager} over a {@link KubeBackend} talking HTTPS to the embedded
 * API server — and drives it with the real kubectl, as a user would.
 *
 * - {@link startCluster}: the server on 127.0.0.1 port 0 (TLS, bearer token) writes a kubeconfig
 *   into a temporary directory; the example's CRDs are applied with kubectl and waited for until
 *   Established; then the operator module's default export wires a manager that is started.
 * - {@link Cluster.kubectl}: runs kubectl with that kubeconfig; resolves with stdout, rejects with
 *   stderr. Every run is killed after `timeoutMs`, so a test never hangs on it.
 * - {@link Cluster.close}: stops the manager, closes the backend and the server, removes the
 *   temporary directory, and rethrows a manager failure.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ApiServer, createApiServer } from '@converge/apiserver';
import { KubeBackend, loadKubeconfig } from '@converge/kube';
import { Manager } from '@converge/runtime';

/** An operator module's default export. */
export type OperatorModule = (manager: Manager) => void | Promise<void>;

/** Options of one kubectl run. */
export interface KubectlOptions {
  /** Written to stdin (for `apply -f -`). */
  readonly input?: string;
  /** The process is killed after this long. Default 15 000. */
  readonly timeoutMs?: number;
}

/** Options of {@link startCluster}. */
export interface ClusterOptions {
  /** The operator module's default export. */
  readonly operator: OperatorModule;
  /** Manifest files holding the example's CRDs, applied with kubectl before the operator starts. */
  readonly crds: readonly string[];
}

/** A running embedded server with the example's operator on it. */
export interface Cluster {
  readonly server: ApiServer;
  /** The kubeconfig the server wrote (and the operator's backend loaded). */
  readonly kubeconfigPath: string;
  /** Runs the real kubectl against the server; resolves with stdout. */
  kubectl(args: readonly string[], options?: KubectlOptions): Promise<string>;
  /** `kubectl get <args> -o json`, parsed. */
  getJson<T = KubeJson>(args: readonly string[]): Promise<T>;
  /** Stops the operator and the server; rethrows the manager's failure if it failed. */
  close(): Promise<void>;
}

/** What `kubectl get -o json` prints of an object (the fields these tests read). */
export interface KubeJson {
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly uid: string;
    readonly resourceVersion?: string;
    readonly generation?: number;
    readonly finalizers?: readonly string[];
    readonly labels?: Readonly<Record<string, string>>;
    readonly ownerReferences?: readonly {
      readonly apiVersion: string;
      readonly kind: string;
      readonly name: string;
      readonly uid: string;
      readonly controller?: boolean;
    }[];
  };
  readonly [field: string]: unknown;
}

/** What `kubectl get <kind> -o json` prints of a list. */
export interface KubeListJson<T = KubeJson> {
  readonly items: readonly T[];
}

/** A failed kubectl run: the arguments, the exit code and what it printed on stderr. */
export class KubectlError extends Error {
  readonly code = 'CONVERGE_ERR_EXAMPLES_KUBECTL';
  readonly args: readonly string[];
  readonly stderr: string;

  constructor(args: readonly string[], stderr: string, cause: unknown) {
    super(`kubectl ${args.join(' ')} failed: ${stderr.trim() || String(cause)}`, { cause });
    this.name = 'KubectlError';
    this.args = args;
    this.stderr = stderr;
  }
}

function runKubectl(
  kubeconfig: string,
  cacheDir: string,
  args: readonly string[],
  options: KubectlOptions,
): Promise<string> {
  const argv = ['--kubeconfig', kubeconfig, '--cache-dir', cacheDir, '--request-timeout=30s', ...args];
  return new Promise((resolve, reject) => {
    const child = execFile(
      'kubectl',
      argv,
      {
        env: { ...process.env, KUBECONFIG: kubeconfig },
        timeout: options.timeoutMs ?? 90_000,
        killSignal: 'SIGKILL',
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        if (error === null) resolve(stdout);
        else reject(new KubectlError(args, stderr, error));
      },
    );
    child.stdin?.end(options.input ?? '');
  });
}

/**
 * Starts the embedded API server, installs the CRDs with kubectl, and runs the operator in a
 * manager whose backend talks HTTP to the server. Close it in `afterAll`/`finally`.
 */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), 'converge-example-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  const cacheDir = join(dir, 'kube-cache');
  const server = createApiServer({ kubeconfigPath });
  let backend: KubeBackend | undefined;
  const stop = new AbortController();
  let running: Promise<unknown> | undefined;
  let failure: Error | undefined;
  const kubectl = (args: readonly string[], o: KubectlOptions = {}) =>
    runKubectl(kubeconfigPath, cacheDir, args, o);

  const close = async (): Promise<void> => {
    stop.abort();
    await running;
    await backend?.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
    if (failure !== undefined) throw failure;
  };

  try {
    await server.listen();
    for (const file of options.crds) {
      const names = (await kubectl(['apply', '-f', file, '-o', 'name'])).split('\n').filter(Boolean);
      const crds = names.filter((n) => n.startsWith('customresourcedefinition'));
      if (crds.length > 0) {
        await kubectl(['wait', '--for=condition=Established', '--timeout=60s', ...crds]);
      }
    }
    backend = new KubeBackend({ config: loadKubeconfig({ path: kubeconfigPath }) });
    const manager = new Manager({ backend, gracefulShutdownTimeoutMs: 5_000 });
    await options.operator(manager);
    running = manager.start(stop.signal).catch((error: unknown) => {
      failure = error instanceof Error ? error : new Error(String(error));
    });
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }

  return {
    server,
    kubeconfigPath,
    kubectl,
    async getJson<T>(args: readonly string[]): Promise<T> {
      return JSON.parse(await kubectl(['get', ...args, '-o', 'json'])) as T;
    },
    close,
  };
}

/**
 * Polls `check` until it returns true (every 50 ms, for at most `timeoutMs`), for states kubectl
 * wait cannot express; throws with `what` when time runs out.
 */
export async function eventually(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A manifest file next to the calling test: `manifest(import.meta.url, 'manifests/crd.yaml')`. */
export function manifest(base: string, path: string): string {
  return fileURLToPath(new URL(path, base));
}
