/**
 * backends.md, "A NATS primary in a `converge dev` module", run as written: its module is saved as
 * `greeter.ts` in a project inside the repository, `converge dev --nats URL ./greeter.ts` runs it
 * (a real process, the machine's NATS at 127.0.0.1:4222 with buckets of a prefix of its own), the
 * guide's Greeting goes into NATS with `converge kv apply`, and the real kubectl reads the ConfigMap
 * it made in the API server; `converge kv get` reads its status back from NATS. Without `--nats` the
 * module stops with the error that says how to get the backend.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  type ConvergeProcess,
  spawnConverge,
  WAIT_MS,
  waitFor,
  within,
} from '../../packages/cli/test/processes.ts';
import { deleteBuckets } from '../../packages/nats/src/test-support.ts';

const exec = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(root, 'packages', 'cli', 'bin', 'converge.js');
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const SECTION = 'A NATS primary in a `converge dev` module';
// Inside the repository (its ignored .converge/), so `@converge/*` resolve to the workspace.
const projects = join(root, '.converge', 'test-projects');
const dirs: string[] = [];
const running: ConvergeProcess[] = [];

afterEach(async () => {
  for (const p of running.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill('SIGTERM');
      await within('converge dev to stop', p.exited, p.output);
    }
  }
});
const prefixes: string[] = [];
afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  // The machine's NATS is shared and long-lived: leave none of this run's buckets in it.
  for (const prefix of prefixes) await deleteBuckets(NATS_URL, prefix);
});

/** The fenced blocks of `lang` in the guide's section. */
function blocks(lang: string): string[] {
  const text = readFileSync(join(root, 'docs', 'guide', 'backends.md'), 'utf8');
  const section = text.split(/^## /m).find((s) => s.startsWith(`${SECTION}\n`));
  if (section === undefined) throw new Error(`backends.md: no section "${SECTION}"`);
  return [...section.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map(
    (m) => m[1] as string,
  );
}

function project(): { dir: string; prefix: string } {
  mkdirSync(projects, { recursive: true });
  const dir = mkdtempSync(join(projects, 'nats-module-'));
  dirs.push(dir);
  const [module] = blocks('ts');
  if (module === undefined) throw new Error('backends.md: no ts block in the section');
  writeFileSync(join(dir, 'greeter.ts'), module);
  // Buckets of this run only: the machine's NATS is shared.
  const prefix = `guide_${process.pid}_${Date.now().toString(36)}_`;
  prefixes.push(prefix);
  return { dir, prefix };
}

function dev(dir: string, prefix: string, args: readonly string[]): ConvergeProcess {
  const p = spawnConverge(
    dir,
    ['dev', ...args, '--port', '0', '--data-dir', join(dir, 'data'), '--kubeconfig', join(dir, 'kubeconfig')],
    { CONVERGE_NATS_BUCKET_PREFIX: prefix },
  );
  running.push(p);
  return p;
}

describe('backends.md: a NATS primary in a converge dev module', () => {
  it("the guide's module, under converge dev --nats, turns a Greeting in NATS into a ConfigMap in Kubernetes and reports it", async () => {
    const { dir, prefix } = project();
    const [run, commands] = blocks('sh');
    // The guide's commands, as written (the test adds only a port, a data dir and a kubeconfig of its own).
    expect(run?.trim()).toBe('npx converge dev --nats nats://127.0.0.1:4222 ./greeter.ts');
    const yaml = /<<'YAML'\n([\s\S]*?)\nYAML/.exec(commands ?? '')?.[1];
    expect(yaml).toContain('kind: Greeting');
    writeFileSync(join(dir, 'hello.yaml'), `${yaml}\n`);
    const p = dev(dir, prefix, ['--nats', NATS_URL, './greeter.ts']);
    await waitFor(
      'the operator to start',
      () => (p.output().includes('"Starting workers"') ? true : undefined),
      p.output,
    );
    expect(p.stdout()).toContain(`converge: NATS JetStream at ${NATS_URL} is the backend named nats`);
    // The Greeting kind lives in NATS: no CRD of it in the API server.
    expect(p.stdout()).not.toContain('CustomResourceDefinition greetings');

    const env = { ...process.env, CONVERGE_NATS_BUCKET_PREFIX: prefix, NATS_URL };
    const applied = await exec(process.execPath, [BIN, 'kv', 'apply', '-f', 'hello.yaml'], { cwd: dir, env });
    expect(applied.stdout).toContain('hello');
    const kubeconfig = join(dir, 'kubeconfig');
    const deadline = Date.now() + WAIT_MS;
    let message = '';
    while (message !== 'Hello from NATS') {
      if (Date.now() > deadline)
        throw new Error(`no ConfigMap hello-greeting within ${WAIT_MS} ms\n${p.output()}`);
      message = await exec(
        'kubectl',
        [
          '--kubeconfig',
          kubeconfig,
          '--request-timeout=20s',
          'get',
          'configmap',
          'hello-greeting',
          '-n',
          'default',
          '-o',
          'jsonpath={.data.message}',
        ],
        { cwd: dir, timeout: 30_000 },
      ).then(
        (r) => r.stdout,
        () => '',
      );
      if (message !== 'Hello from NATS') await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // Owner labels, not owner references: the Greeting is not in Kubernetes.
    const labels = JSON.parse(
      (
        await exec(
          'kubectl',
          [
            '--kubeconfig',
            kubeconfig,
            'get',
            'configmap',
            'hello-greeting',
            '-n',
            'default',
            '-o',
            'jsonpath={.metadata}',
          ],
          {
            cwd: dir,
            timeout: 30_000,
          },
        )
      ).stdout,
    ) as { labels?: Record<string, string>; ownerReferences?: unknown };
    expect(labels.labels?.['converge.dev/owner-kind']).toBe('Greeting.nats.example.com');
    expect(labels.ownerReferences).toBeUndefined();
    // Its status went back to NATS.
    const statusDeadline = Date.now() + WAIT_MS;
    for (;;) {
      const got = await exec(
        process.execPath,
        [BIN, 'kv', 'get', 'greetings.nats.example.com/v1', 'hello', '-o', 'json'],
        { cwd: dir, env },
      );
      const greeting = JSON.parse(got.stdout) as { status?: { configMap?: string } };
      if (greeting.status?.configMap === 'hello-greeting') break;
      if (Date.now() > statusDeadline)
        throw new Error(`no status within ${WAIT_MS} ms: ${got.stdout}\n${p.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await exec(process.execPath, [BIN, 'kv', 'delete', 'greetings.nats.example.com/v1', 'hello'], {
      cwd: dir,
      env,
    });
    expect(p.output()).not.toMatch(/"level":"(error|fatal)"/);
  });

  it('without --nats, the module stops at once saying how to get the backend', async () => {
    const { dir, prefix } = project();
    const p = dev(dir, prefix, ['./greeter.ts']);
    const exit = await within('converge dev to exit', p.exited, p.output);
    expect(exit.code).toBe(1);
    expect(p.stderr()).toContain('converge dev --nats URL gives one named nats');
  });
});
