/**
 * The website example as a user runs it: `converge dev examples/website/operator.ts` as a real
 * process (its own process group, stopped with SIGINT as Ctrl-C does), and the real kubectl
 * against the kubeconfig it writes. One process per test file.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateWebhookCertificates } from '@converge/kube';
import { type KubectlResult, runKubectl } from '../../packages/apiserver/src/server/kubectl-support.ts';

const BIN = fileURLToPath(new URL('../../packages/cli/bin/converge.js', import.meta.url));
export const OPERATOR = fileURLToPath(new URL('../../examples/website/operator.ts', import.meta.url));
/** How long the process may take to print a line we wait for. */
const WAIT_MS = 20_000;

/** What the webhook configurations `converge dev` registers call the example's webhooks. */
export const MUTATING_WEBHOOK = 'mwebsite-v1alpha1.examples.converge.dev';
export const VALIDATING_WEBHOOK = 'vwebsite-v1alpha1.examples.converge.dev';

/** A running `converge dev` with the website example, and kubectl against it. */
export interface Dev {
  readonly dir: string;
  readonly kubeconfig: string;
  /** Everything the process printed so far (for failure messages). */
  output(): string;
  /** Runs kubectl; `input` goes to stdin. Never throws for a non-zero exit: read `code`. */
  kubectl(args: readonly string[], input?: string): Promise<KubectlResult>;
  /** Like {@link kubectl} but throws with stderr unless it exits 0; resolves with stdout. */
  ok(args: readonly string[], input?: string): Promise<string>;
  /** `kubectl get … -o json`, parsed. */
  json<T = Record<string, unknown>>(args: readonly string[]): Promise<T>;
  /** Starts kubectl without waiting for it (for `get --watch`). */
  spawnKubectl(args: readonly string[]): ChildProcess;
  /** SIGINT to the process group; resolves with its exit code; removes the temporary directory. */
  stop(): Promise<number | null>;
}

/** Sends `signal` to the process group `child` leads (nothing when it is gone). */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/** Waits until `output()` matches `pattern`; fails at once when the process exits first. */
async function waitFor(child: ChildProcess, output: () => string, pattern: RegExp): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!pattern.test(output())) {
    if (child.exitCode !== null) throw new Error(`converge dev exited (${child.exitCode}):\n${output()}`);
    if (Date.now() > deadline) throw new Error(`converge dev never printed ${pattern}:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Starts `converge dev examples/website/operator.ts` on a free port with a fresh data directory,
 * and resolves once the operator runs and dev has served its webhooks and registered them in the
 * embedded API server (configurations and the CRD's conversion webhook).
 */
export async function startDev(): Promise<Dev> {
  const dir = mkdtempSync(join(tmpdir(), 'converge-website-admission-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const cacheDir = join(dir, 'kube-cache');
  const child = spawn(
    process.execPath,
    [BIN, 'dev', OPERATOR, '--port', '0', '--kubeconfig', kubeconfig, '--data-dir', join(dir, 'data')],
    { cwd: dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-65_536);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', () => resolve(null));
  });

  const kubectl = (args: readonly string[], input?: string) =>
    runKubectl('kubectl', kubeconfig, cacheDir, args, input === undefined ? {} : { input });
  const ok = async (args: readonly string[], input?: string): Promise<string> => {
    const result = await kubectl(args, input);
    if (result.code !== 0)
      throw new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
    return result.stdout;
  };
  const dev: Dev = {
    dir,
    kubeconfig,
    output: () => output,
    kubectl,
    ok,
    json: async <T>(args: readonly string[]) => JSON.parse(await ok(['get', ...args, '-o', 'json'])) as T,
    spawnKubectl: (args) =>
      spawn('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', cacheDir, ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    async stop() {
      signalGroup(child, 'SIGINT');
      const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(timer);
      signalGroup(child, 'SIGKILL'); // nothing of the group outlives the test
      rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
  try {
    await waitFor(child, () => output, /converge: running operator .*website\/operator\.ts/);
    await waitFor(child, () => output, /converge: serving webhooks at https:\/\/127\.0\.0\.1:\d+: /);
    await waitForWebhooks(dev);
  } catch (error) {
    await dev.stop();
    throw error;
  }
  return dev;
}

/** Waits until the example's webhook configurations and the CRD's conversion webhook are registered. */
async function waitForWebhooks(dev: Dev): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const names = await dev.kubectl([
      'get',
      'mutatingwebhookconfigurations,validatingwebhookconfigurations',
      '-o',
      'jsonpath={.items[*].webhooks[*].name}',
    ]);
    const crd = await dev.kubectl([
      'get',
      'crd',
      'websites.examples.converge.dev',
      '-o',
      'jsonpath={.spec.conversion.webhook.clientConfig.url}',
    ]);
    const registered = names.stdout.split(' ');
    if (registered.includes(MUTATING_WEBHOOK) && registered.includes(VALIDATING_WEBHOOK) && crd.stdout !== '')
      return;
    if (Date.now() > deadline) {
      throw new Error(
        `converge dev did not register the website webhooks (found ${JSON.stringify(names.stdout)}, conversion url ${JSON.stringify(crd.stdout)}):\n${dev.output()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A Website manifest (v1alpha1) for `kubectl apply -f -`. */
export function website(
  name: string,
  spec: Record<string, unknown>,
  labels: Record<string, string> = {},
): string {
  return JSON.stringify({
    apiVersion: 'examples.converge.dev/v1alpha1',
    kind: 'Website',
    metadata: { name, namespace: 'default', labels },
    spec: { content: `<h1>${name}</h1>`, ...spec },
  });
}

/** The v1alpha1 resource, for kubectl (plain `website` means v1beta1: the preferred version). */
export const WEBSITE_V1ALPHA1 = 'websites.v1alpha1.examples.converge.dev';
/** The v1beta1 resource. */
export const WEBSITE_V1BETA1 = 'websites.v1beta1.examples.converge.dev';

/** An HTTPS server that accepts webhook calls and never answers (or not at all, once closed). */
export interface SilentServer {
  readonly url: string;
  /** base64 PEM of its CA, for `caBundle`. */
  readonly caBundle: string;
  /** Destroys every connection (also ones mid-handshake) and stops listening. */
  close(): Promise<void>;
}

export async function startSilentServer(): Promise<SilentServer> {
  const certs = await generateWebhookCertificates({ hosts: ['127.0.0.1'] });
  const sockets = new Set<Socket>();
  const server = createServer({ cert: certs.cert, key: certs.key }, () => {
    // never answers
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    caBundle: Buffer.from(certs.caCert).toString('base64'),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
