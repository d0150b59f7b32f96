/**
 * Operator modules under the real `converge` binary: what a newcomer sees when a module does not
 * load, when its reconciler throws, and when they press Ctrl-C.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type ConvergeProcess, type Exit, spawnConverge, waitFor, within } from './processes.ts';

const dirs: string[] = [];
const processes: ConvergeProcess[] = [];

afterEach(async () => {
  for (const p of processes.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await p.exited;
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A temporary directory holding `files` (name → content). */
function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'converge-modules-'));
  dirs.push(dir);
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}

function converge(dir: string, args: readonly string[]): ConvergeProcess {
  const p = spawnConverge(dir, args);
  processes.push(p);
  return p;
}

const dev = (dir: string, ...args: string[]): ConvergeProcess =>
  converge(dir, ['dev', ...args, '--port', '0', '--data-dir', join(dir, 'data')]);

/** True once the process has exited (the pid is gone, nothing of it is left running). */
function gone(pid: number | undefined): boolean {
  try {
    process.kill(pid ?? -1, 0);
    return false;
  } catch (error) {
    return (error as { code?: string }).code === 'ESRCH';
  }
}

/** Waits for `line` on the process's output (a substring of a line). */
const printed = (p: ConvergeProcess, line: string, from: () => string = p.output): Promise<true> =>
  waitFor(JSON.stringify(line), () => (from().includes(line) ? true : undefined), p.output);

const exit = (p: ConvergeProcess): Promise<Exit> => within('converge to exit', p.exited, p.output);

/** Watches Namespaces (every server has some) and throws on every reconcile. */
const FAILING = `
const namespaces = { group: '', version: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false };
export default (manager) => {
  manager.controller(namespaces).named('failing').complete((key) => {
    throw new Error('cannot reconcile ' + key.name);
  });
};
`;

/** A runnable that never returns, so a graceful stop waits for the manager's shutdown timeout. */
const STUBBORN = `
export default (manager) => {
  manager.add(() => new Promise(() => {}), { name: 'stubborn', group: 'others' });
};
`;

describe('converge dev with an operator module that cannot be used', () => {
  const cases = [
    { what: 'a missing file', file: 'missing.ts', files: {}, cause: /does not exist \(.*missing\.ts\)/ },
    {
      what: 'a throw at import',
      file: 'throws.ts',
      files: { 'throws.ts': "throw new Error('no config at import');\nexport default () => {};\n" },
      cause: /failed to load: no config at import/,
    },
    {
      what: 'a missing package',
      file: 'needs-package.ts',
      files: { 'needs-package.ts': "import 'converge-test-no-such-package';\nexport default () => {};\n" },
      cause: /failed to load: Cannot find package 'converge-test-no-such-package'/,
    },
    {
      what: 'a throw while wiring',
      file: 'wiring.ts',
      files: { 'wiring.ts': "export default () => { throw new Error('no kind to watch'); };\n" },
      cause: /failed while wiring its controllers: no kind to watch/,
    },
  ];

  for (const c of cases) {
    it(`exits 1 at once on ${c.what}, naming the module and the cause, and leaves nothing running`, async () => {
      const dir = project(c.files);
      const p = dev(dir, `./${c.file}`);
      // At once: the exit is awaited with no other event first (the test's timeout detects a hang).
      const { code, signal } = await exit(p);
      expect({ code, signal }).toEqual({ code: 1, signal: null });
      const line = p
        .stderr()
        .split('\n')
        .find((l) => l.startsWith('converge: operator module'));
      expect(line).toContain(`operator module ./${c.file} `);
      expect(line).toMatch(c.cause);
      expect(gone(p.child.pid)).toBe(true);
      // It ended by itself: the server was closed, not left for the exit safety net.
      expect(p.stderr()).not.toContain('still keeps the process alive');
    });
  }

  it('prints the stack of what the module threw, so the line can be found', async () => {
    const dir = project({ 'throws.ts': "export const x = 1;\nthrow new Error('at line two');\n" });
    const p = dev(dir, './throws.ts');
    expect((await exit(p)).code).toBe(1);
    expect(p.stderr()).toMatch(/Error: at line two\n\s+at .*throws\.ts:2:/);
  });
});

describe('a reconciler that throws, under converge dev and converge run', () => {
  it('logs "Reconciler error" with the message, the stack and the request on stderr; no bundled-example hint for a user module', async () => {
    const dir = project({ 'failing.ts': FAILING });
    const d = dev(dir, './failing.ts');
    await printed(d, '"msg":"Reconciler error"', d.stderr);
    const line = d
      .stderr()
      .split('\n')
      .find((l) => l.includes('"msg":"Reconciler error"') && l.includes('"name":"default"'));
    const record = JSON.parse(line ?? '{}') as Record<string, unknown>;
    expect(record).toMatchObject({
      level: 'error',
      controller: 'failing',
      name: 'default',
      reconcileId: expect.stringMatching(/^failing-/),
      err: { type: 'Error', message: 'cannot reconcile default' },
    });
    expect((record.err as { stack?: string }).stack).toMatch(/at .*failing\.ts:5:/);

    // converge run, against the API server converge dev serves, logs the same way.
    const kubeconfig = join(dir, '.converge', 'kubeconfig');
    const r = converge(dir, ['run', './failing.ts', '--kubeconfig', kubeconfig]);
    await printed(r, '"msg":"Reconciler error"', r.stderr);
    expect(r.stderr()).toMatch(
      /"message":"cannot reconcile default","stack":"Error: cannot reconcile default\\n/,
    );
    r.child.kill('SIGTERM');
    expect((await exit(r)).code).toBe(0);

    d.child.kill('SIGINT');
    expect((await exit(d)).code).toBe(0);
    expect(d.stdout()).toContain('converge: running operator ./failing.ts');
    expect(d.stdout()).toContain('converge: stopped');
    expect(d.stdout()).not.toContain('configmapgenerators');
  });
});

describe('signals', () => {
  for (const [first, second, code] of [
    ['SIGINT', 'SIGINT', 130],
    ['SIGTERM', 'SIGINT', 130],
    ['SIGINT', 'SIGTERM', 143],
  ] as const) {
    it(`a ${second} after a ${first}, while operators are still stopping, exits at once with ${code}`, async () => {
      const dir = project({ 'stubborn.ts': STUBBORN });
      const p = dev(dir, './stubborn.ts');
      await printed(p, 'converge: running operator ./stubborn.ts');
      p.child.kill(first);
      await printed(p, `converge: stopping on ${first}`, p.stderr);
      p.child.kill(second);
      // 128 + the second signal's number: only the second signal's handler exits so. Had converge
      // waited for the stubborn operator instead, it would have ended at the 30 s graceful-shutdown
      // timeout, naming the grace period; no clock is needed to tell the two apart.
      expect(await exit(p)).toMatchObject({ code, signal: null });
      expect(p.stderr()).not.toContain('grace period');
      expect(p.stdout()).not.toContain('converge: stopped');
    });
  }

  it('a signal while a module is still loading stops converge dev at once', async () => {
    const dir = project({ 'slow.ts': 'await new Promise(() => {});\nexport default () => {};\n' });
    const p = dev(dir, './slow.ts');
    await printed(p, 'converge: serving Kubernetes API', p.stdout);
    p.child.kill('SIGTERM');
    expect(await exit(p)).toMatchObject({ code: 0, signal: null });
    expect(p.stdout()).toContain('converge: stopped');
    expect(p.stdout()).not.toContain('running operator');
  });

  it('a module that leaves a timer running does not keep converge alive after it stopped', async () => {
    const dir = project({
      'leaky.ts': 'setInterval(() => {}, 1_000);\nexport default () => {};\n',
    });
    const p = dev(dir, './leaky.ts');
    await printed(p, 'converge: running operator ./leaky.ts');
    p.child.kill('SIGINT');
    expect(await exit(p)).toMatchObject({ code: 0, signal: null });
    expect(p.stderr()).toContain('still keeps the process alive; exiting');
  });
});
