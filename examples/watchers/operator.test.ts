/**
 * The watchers example with real processes, as a user runs it: `converge serve` (the embedded API
 * server, with a data directory) is one process, `converge run examples/watchers/operator.ts` is
 * another, stopped with SIGINT to its process group and started again; kubectl applies and deletes
 * Tenants. What the operator did is read from the cluster: the Tenants' finalizers and their
 * ConfigMaps, whose annotations count the add and sync calls.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, KubectlError, type KubeJson, manifest } from '../test-support.ts';
import { ADDS_ANNOTATION, recordName, SYNCS_ANNOTATION, TENANT_FINALIZER } from './operator.ts';

const BIN = fileURLToPath(new URL('../../packages/cli/bin/converge.js', import.meta.url));
const OPERATOR = fileURLToPath(new URL('./operator.ts', import.meta.url));

type TenantJson = KubeJson & {
  readonly metadata: KubeJson['metadata'] & { readonly deletionTimestamp?: string };
};
type ConfigMapJson = KubeJson & {
  readonly metadata: KubeJson['metadata'] & { readonly annotations?: Readonly<Record<string, string>> };
  readonly data?: Readonly<Record<string, string>>;
};

/** A `converge` process in its own process group, its output kept for failure messages. */
interface Converge {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  output(): string;
}

let dir: string;
let kubeconfig: string;
let server: Converge | undefined;
const operators: Converge[] = [];

function converge(args: readonly string[]): Converge {
  // detached: a process group of its own, so a signal reaches it (and only it) as Ctrl-C would.
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: dir,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-16_384);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => {
    child.once('close', (code) => resolve(code)); // its last lines may outlive 'exit' in the pipes
    child.once('error', () => resolve(null));
  });
  return { child, exited, output: () => output };
}

/** Sends `signal` to the process group of `p` (nothing if it already exited). */
function signalGroup(p: Converge, signal: NodeJS.Signals): void {
  if (p.child.exitCode !== null || p.child.signalCode !== null || p.child.pid === undefined) return;
  try {
    process.kill(-p.child.pid, signal);
  } catch {
    // already gone
  }
}

/** Runs the real kubectl against the server; `input` goes to its stdin. Resolves with stdout. */
function kubectlWith(input: string, args: readonly string[]): Promise<string> {
  const argv = ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'kube-cache'), '--request-timeout=30s'];
  return new Promise((resolve, reject) => {
    const child = execFile(
      'kubectl',
      [...argv, ...args],
      { timeout: 90_000, killSignal: 'SIGKILL' },
      (error, stdout, stderr) =>
        error === null ? resolve(stdout) : reject(new KubectlError(args, stderr, error)),
    );
    child.stdin?.end(input);
  });
}

const kubectl = (...args: string[]): Promise<string> => kubectlWith('', args);

async function getJson<T>(...args: string[]): Promise<T | undefined> {
  try {
    return JSON.parse(await kubectl('get', ...args, '-o', 'json')) as T;
  } catch (error) {
    if (error instanceof KubectlError && /NotFound|not found/.test(error.stderr)) return undefined;
    throw error;
  }
}

const tenant = (name: string) => getJson<TenantJson>('tenant', name, '-n', 'default');
const record = (name: string) => getJson<ConfigMapJson>('configmap', recordName(name), '-n', 'default');

/** Waits until `p` prints `line`; fails at once if it exits first, and with its output on a timeout. */
async function waitForLine(p: Converge, line: string, what: string): Promise<void> {
  try {
    await eventually(
      what,
      async () => {
        if (p.child.exitCode !== null) throw new Error(`it exited with code ${p.child.exitCode}`);
        return p.output().includes(line);
      },
      30_000,
    );
  } catch (error) {
    throw new Error(`${what}: ${(error as Error).message}\n${p.output()}`, { cause: error });
  }
}

/** Starts the operator as its own process and waits until it says it runs. */
async function startOperator(): Promise<Converge> {
  // No probe server: its default :8081 is one port for the whole machine (a second suite beside this one holds it).
  const operator = converge([
    'run',
    OPERATOR,
    '--kubeconfig',
    kubeconfig,
    '--health-probe-bind-address',
    '0',
  ]);
  operators.push(operator);
  await waitForLine(operator, 'converge: running operator', 'the operator to start');
  return operator;
}

/** Ctrl-C: SIGINT to the operator's process group; it stops cleanly (exit code 0). */
async function stopOperator(operator: Converge): Promise<void> {
  signalGroup(operator, 'SIGINT');
  expect(await operator.exited, operator.output()).toBe(0);
}

/** Applies a Tenant in the default namespace with kubectl. */
function applyTenant(name: string, owner: string, plan = 'free'): Promise<string> {
  const object = {
    apiVersion: 'examples.converge.dev/v1alpha1',
    kind: 'Tenant',
    metadata: { name, namespace: 'default' },
    spec: { owner, plan },
  };
  return kubectlWith(JSON.stringify(object), ['apply', '-f', '-']);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'converge-watchers-'));
  kubeconfig = join(dir, 'kubeconfig');
  server = converge(['serve', '--port', '0', '--kubeconfig', kubeconfig, '--data-dir', join(dir, 'data')]);
  await waitForLine(server, 'serving Kubernetes API', 'the API server to serve');
  await kubectl('apply', '-f', manifest(import.meta.url, 'manifests/crd.yaml'));
  await kubectl('wait', '--for=condition=Established', '--timeout=60s', 'crd/tenants.examples.converge.dev');
});

afterAll(async () => {
  // Operators still running after a failed test are killed; the server stops as on Ctrl-C.
  for (const operator of operators) {
    signalGroup(operator, 'SIGKILL');
    await operator.exited;
  }
  if (server !== undefined) {
    signalGroup(server, 'SIGINT');
    const timer = setTimeout(() => server !== undefined && signalGroup(server, 'SIGKILL'), 5_000);
    await server.exited;
    clearTimeout(timer);
  }
  rmSync(dir, { recursive: true, force: true });
});

/** The add and sync counts the operator wrote on a Tenant's ConfigMap. */
function counts(cm: ConfigMapJson | undefined): { adds: string | undefined; syncs: string | undefined } {
  return {
    adds: cm?.metadata.annotations?.[ADDS_ANNOTATION],
    syncs: cm?.metadata.annotations?.[SYNCS_ANNOTATION],
  };
}

describe('watchers example: two processes, the operator stopped and started again', () => {
  let operator: Converge;

  it('a Tenant applied with kubectl is added: its ConfigMap appears (no owner reference) and the Tenant carries the finalizer', async () => {
    operator = await startOperator();
    await applyTenant('acme', 'wile@acme.example', 'team');
    await applyTenant('globex', 'hank@globex.example');
    for (const name of ['acme', 'globex']) {
      await eventually(`the ConfigMap of ${name}`, async () => (await record(name)) !== undefined);
      await eventually(`the finalizer on ${name}`, async () =>
        ((await tenant(name))?.metadata.finalizers ?? []).includes(TENANT_FINALIZER),
      );
    }
    const acme = await record('acme');
    expect(acme?.data).toEqual({ tenant: 'acme', owner: 'wile@acme.example', plan: 'team' });
    expect(acme?.metadata.ownerReferences).toBeUndefined();
    expect(counts(acme)).toEqual({ adds: '1', syncs: undefined });
    expect((await tenant('acme'))?.metadata.finalizers).toEqual([TENANT_FINALIZER]);
  });

  it('a spec change runs the update handler: the ConfigMap follows', async () => {
    await kubectl(
      'patch',
      'tenant',
      'globex',
      '-n',
      'default',
      '--type=merge',
      '-p',
      '{"spec":{"plan":"enterprise"}}',
    );
    await eventually(
      'the ConfigMap of globex to follow its plan',
      async () => (await record('globex'))?.data?.plan === 'enterprise',
    );
    expect(counts(await record('globex'))).toEqual({ adds: '1', syncs: undefined });
  });

  it('deleted while the operator is down, a Tenant stays (Terminating) because of the finalizer, and so does its ConfigMap', async () => {
    await stopOperator(operator);
    await kubectl('delete', 'tenant', 'acme', '-n', 'default', '--wait=false');
    const acme = await tenant('acme');
    expect(acme?.metadata.deletionTimestamp).toBeDefined();
    expect(acme?.metadata.finalizers).toEqual([TENANT_FINALIZER]);
    expect(await record('acme')).toBeDefined();
  });

  it('started again, the operator runs the delete handler (the ConfigMap goes), removes the finalizer, and the Tenant disappears; the Tenant already handled is synced, not added', async () => {
    operator = await startOperator();
    await kubectl('wait', '--for=delete', '--timeout=60s', 'tenant/acme', '-n', 'default');
    expect(await record('acme')).toBeUndefined();
    await eventually('globex to be synced', async () => counts(await record('globex')).syncs === '1');
    expect(counts(await record('globex'))).toEqual({ adds: '1', syncs: '1' });
    expect((await tenant('globex'))?.metadata.finalizers).toEqual([TENANT_FINALIZER]);
  });

  it('sync repairs: a ConfigMap deleted while the operator is down is back after the next start (synced, not added)', async () => {
    await stopOperator(operator);
    await kubectl('delete', 'configmap', recordName('globex'), '-n', 'default');
    operator = await startOperator();
    await eventually(
      'the ConfigMap of globex to be back',
      async () => (await record('globex')) !== undefined,
    );
    const globex = await record('globex');
    expect(globex?.data).toEqual({ tenant: 'globex', owner: 'hank@globex.example', plan: 'enterprise' });
    // A new ConfigMap: its counts start again, and only sync ran.
    expect(counts(globex)).toEqual({ adds: undefined, syncs: '1' });
    await stopOperator(operator);
  });
});
