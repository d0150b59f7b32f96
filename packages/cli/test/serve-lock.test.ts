/**
 * Two real `converge serve` processes on one data directory: the second is refused before it
 * writes anything (the kubeconfig and tokens the first handed out stay byte for byte), the first
 * keeps serving, and once the first is SIGKILLed a third takes its lock over and serves its objects.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { type ConvergeProcess, spawnConverge, waitFor, within } from './processes.ts';

const exec = promisify(execFile);
const procs: ConvergeProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const p of procs.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function converge(cwd: string, args: string[]): ConvergeProcess {
  const proc = spawnConverge(cwd, args);
  procs.push(proc);
  return proc;
}

/** Resolves once `proc` printed its first line, which says it serves. */
function serving(proc: ConvergeProcess): Promise<true> {
  return waitFor(
    'converge serve to serve',
    () => (proc.stdout().includes('converge: serving Kubernetes API at ') ? true : undefined),
    proc.output,
  );
}

async function kubectl(kubeconfig: string, ...args: string[]): Promise<string> {
  const { stdout } = await exec('kubectl', ['--kubeconfig', kubeconfig, '--request-timeout=20s', ...args], {
    timeout: 30_000,
  });
  return stdout;
}

/** Every file below `dir` except `skip`'s: its bytes and modification time. */
function files(dir: string, skip: string): Map<string, { bytes: Buffer; mtimeMs: number }> {
  const found = new Map<string, { bytes: Buffer; mtimeMs: number }>();
  const walk = (path: string): void => {
    if (path === skip) return;
    const stat = statSync(path);
    if (stat.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
    else found.set(relative(dir, path), { bytes: readFileSync(path), mtimeMs: stat.mtimeMs });
  };
  walk(dir);
  return found;
}

describe('converge serve and the data directory lock (real processes)', () => {
  it('a second serve on the same data directory exits 1 at once, naming the directory and the first pid, and writes nothing; the first keeps serving; after kill -9 a third takes the lock over and serves the first one’s objects', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'converge-serve-lock-'));
    dirs.push(dir);
    const kubeconfig = join(dir, 'kubeconfig');
    const data = join(dir, 'data');
    const store = join(data, 'store');
    const args = ['serve', '--port', '0', '--data-dir', data, '--kubeconfig', kubeconfig, '--fault-admin'];

    const first = converge(dir, args);
    await serving(first);
    await kubectl(kubeconfig, 'create', 'configmap', 'kept', '-n', 'default', '--from-literal=a=1');
    // The kubeconfig, the fault admin token, the token and certificates in data/pki: the store's
    // own files are the first server's to write.
    const before = files(dir, store);
    expect([...before.keys()]).toEqual(expect.arrayContaining(['kubeconfig', 'fault-admin-token']));

    const second = converge(dir, args);
    const exit = await within('the second serve to exit', second.exited, second.output);
    expect(exit.code, second.output()).toBe(1);
    expect(second.stdout()).not.toContain('serving');
    expect(second.stderr()).toContain(
      `converge: the data directory ${store} is locked by process ${first.child.pid} on host ${hostname()}`,
    );
    expect(second.stderr()).toContain('(CONVERGE_ERR_STORE_LOCKED)');
    expect(files(dir, store)).toEqual(before);

    expect(first.child.exitCode).toBe(null);
    expect(
      await kubectl(kubeconfig, 'get', 'configmap', 'kept', '-n', 'default', '-o', 'jsonpath={.data.a}'),
    ).toBe('1');

    first.child.kill('SIGKILL');
    await within('the first serve to die', first.exited, first.output);
    expect(JSON.parse(readFileSync(join(store, 'LOCK'), 'utf8')).pid).toBe(first.child.pid);

    const third = converge(dir, args);
    await serving(third);
    expect(third.stderr()).toContain('took over the store data directory lock of a process that is gone');
    expect(JSON.parse(readFileSync(join(store, 'LOCK'), 'utf8')).pid).toBe(third.child.pid);
    expect(
      await kubectl(kubeconfig, 'get', 'configmap', 'kept', '-n', 'default', '-o', 'jsonpath={.data.a}'),
    ).toBe('1');
    third.child.kill('SIGTERM');
    expect((await within('the third serve to stop', third.exited, third.output)).code).toBe(0);
    expect(existsSync(join(store, 'LOCK'))).toBe(false);
  }, 90_000);
});
