import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sharedNatsUrl, uniqueSuffix } from '../../nats/src/test-harness.ts';
import { deleteBuckets } from '../../nats/src/test-support.ts';
import { guessKind, guessPlural, main, parseCommand, typeFromArgument } from '../src/index.ts';
import { type ConvergeProcess, spawnConverge, waitFor } from './processes.ts';

const exec = promisify(execFile);
const bin = fileURLToPath(new URL('../bin/converge.js', import.meta.url));
const sample = fileURLToPath(new URL('../../../examples/kumori/manifests/application.yaml', import.meta.url));
const generatorSample = fileURLToPath(
  new URL('../../../examples/configmap-generator/manifests/sample.yaml', import.meta.url),
);
const TYPE = 'applications.kumori.examples.converge.dev/v1';
const OWNED = 'converge.dev/owner-kind=Application.kumori.examples.converge.dev';

const dirs: string[] = [];
const processes: ConvergeProcess[] = [];

function tmp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'converge-kv-'));
  dirs.push(dir);
  return dir;
}

/** Runs `main(argv)` in this process; resolves with the exit code and what it printed. */
async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l), stopped: Promise.resolve() };
  const code = await main(argv, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address !== null ? address.port : 1;
}

async function kubectl(kubeconfig: string, ...args: string[]): Promise<string> {
  const { stdout } = await exec('kubectl', ['--kubeconfig', kubeconfig, '--request-timeout=20s', ...args], {
    timeout: 30_000,
  });
  return stdout;
}

/** Polls `probe` every 100 ms until it returns a value; fails after 30 s. */
async function eventually<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

afterEach(async () => {
  for (const p of processes.splice(0)) {
    if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await p.exited;
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('converge kv: arguments and types', () => {
  it('guesses plurals as kubectl does, and kinds from plurals by undoing it', () => {
    const plurals = {
      Application: 'applications',
      Policy: 'policies',
      Gateway: 'gateways',
      Ingress: 'ingresses',
      Box: 'boxes',
      Mesh: 'meshes',
      Patch: 'patches',
      Quiz: 'quizes',
      Case: 'cases',
    };
    for (const [kind, plural] of Object.entries(plurals)) expect(guessPlural(kind)).toBe(plural);
    for (const kind of ['Application', 'Policy', 'Gateway', 'Ingress', 'Box', 'Mesh', 'Patch', 'Case']) {
      expect(guessKind(guessPlural(kind))).toBe(kind);
    }
    expect(typeFromArgument(TYPE)).toMatchObject({
      group: 'kumori.examples.converge.dev',
      version: 'v1',
      kind: 'Application',
      plural: 'applications',
      namespaced: true,
    });
    expect(typeFromArgument('ConfigMap/v1')).toMatchObject({
      group: '',
      kind: 'ConfigMap',
      plural: 'configmaps',
    });
    expect(
      typeFromArgument('Index.example.com/v2', { plural: 'indices', clusterScoped: true }),
    ).toMatchObject({
      kind: 'Index',
      plural: 'indices',
      namespaced: false,
    });
    for (const bad of ['applications', 'applications.example.com', '/v1', 'widgets./v1']) {
      expect(() => typeFromArgument(bad)).toThrow(/TYPE/);
    }
  });

  it('parses kv commands and rejects bad ones naming what is wrong', () => {
    expect(
      parseCommand(['kv', 'apply', '-f', 'a.yaml', '-f', 'b.yaml', '--bucket-prefix', 'p_']),
    ).toMatchObject({
      command: 'kv',
      verb: 'apply',
      files: ['a.yaml', 'b.yaml'],
      bucketPrefix: 'p_',
    });
    expect(parseCommand(['kv', 'get', TYPE, 'hello', '-n', 'team', '-o', 'yaml'])).toMatchObject({
      verb: 'get',
      resource: TYPE,
      names: ['hello'],
      namespace: 'team',
      output: 'yaml',
    });
    expect(parseCommand(['kv', 'get', TYPE, '-A'])).toMatchObject({ allNamespaces: true, names: [] });
    expect(parseCommand(['kv', '--help'])).toEqual({ command: 'help', topic: 'kv' });
    expect(() => parseCommand(['kv', 'frob'])).toThrow(
      'converge kv: unknown verb frob; expected apply, get or delete',
    );
    expect(() => parseCommand(['kv', 'apply', 'x.yaml'])).toThrow(/-f FILE/);
    expect(() => parseCommand(['kv', 'get'])).toThrow(/TYPE/);
    expect(() => parseCommand(['kv', 'delete', TYPE])).toThrow(/NAME/);
    expect(() => parseCommand(['kv', 'get', TYPE, '-o', 'wide'])).toThrow(/--output/);
    expect(() => parseCommand(['kv', 'delete', TYPE, 'x', '-o', 'json'])).toThrow(/--output/);
    expect(() => parseCommand(['kv', 'get', TYPE, 'x', '-A'])).toThrow(/--all-namespaces/);
    expect(() => parseCommand(['kv', 'get', TYPE, '--bogus'])).toThrow('converge kv: unknown option --bogus');
    expect(() => parseCommand(['kv', 'get', 'applications'])).toThrow(/TYPE.*RESOURCE\.GROUP\/VERSION/);
    expect(() => parseCommand(['kv', 'get', 'configmaps/v1', '--kind', 'configMap'])).toThrow(
      'converge kv: --kind must be a PascalCase kind such as ConfigMap, got "configMap"',
    );
  });

  it('prints its help', async () => {
    const help = await run('kv', '--help');
    expect(help.code).toBe(0);
    expect(help.out).toContain('converge kv apply -f FILE');
    expect((await run('--help')).out).toContain('kv <verb>');
    expect((await run('kv', 'frob')).code).toBe(2);
    expect((await run('kv', 'get', 'widgets')).code).toBe(2);
  });
});

describe('converge kv against NATS', () => {
  let url: string;
  let prefix: string;

  beforeEach(async () => {
    url = await sharedNatsUrl();
    prefix = `cli${uniqueSuffix()}_`;
  });
  afterEach(async () => {
    await deleteBuckets(url, prefix);
  });

  it('applies (created, unchanged, configured), gets as a table, yaml, json and names, and deletes', async () => {
    const nats = ['--nats', url, '--bucket-prefix', prefix];
    const dir = tmp();
    const file = join(dir, 'apps.yaml');
    const doc = (name: string, replicas: number) =>
      `apiVersion: kumori.examples.converge.dev/v1\nkind: Application\nmetadata: {name: ${name}}\nspec: {image: nginx, replicas: ${replicas}}\n`;
    writeFileSync(file, `${doc('one', 1)}---\n${doc('two', 2)}`);

    expect(await run('kv', 'apply', '-f', file, ...nats)).toMatchObject({
      code: 0,
      out: 'application.kumori.examples.converge.dev/one created\napplication.kumori.examples.converge.dev/two created',
    });
    expect((await run('kv', 'apply', '-f', file, ...nats)).out).toBe(
      'application.kumori.examples.converge.dev/one unchanged\napplication.kumori.examples.converge.dev/two unchanged',
    );
    writeFileSync(file, doc('two', 5));
    expect((await run('kv', 'apply', '-f', file, ...nats)).out).toBe(
      'application.kumori.examples.converge.dev/two configured',
    );

    const table = await run('kv', 'get', TYPE, ...nats);
    expect(table.code).toBe(0);
    expect(table.out.split('\n').map((l) => l.split(/\s+/).slice(0, 2))).toEqual([
      ['NAME', 'READY'],
      ['one', '-'],
      ['two', '-'],
    ]);
    const json = JSON.parse(
      (await run('kv', 'get', 'Application.kumori.examples.converge.dev/v1', 'two', '-o', 'json', ...nats))
        .out,
    );
    expect(json).toMatchObject({
      kind: 'Application',
      metadata: { name: 'two', namespace: 'default', generation: 2 },
    });
    expect(json.spec).toEqual({ image: 'nginx', replicas: 5 });
    expect((await run('kv', 'get', TYPE, 'one', '-o', 'yaml', ...nats)).out).toMatch(
      /^apiVersion: kumori\.examples\.converge\.dev\/v1\nkind: Application\n/,
    );
    expect((await run('kv', 'get', TYPE, '-A', '-o', 'name', ...nats)).out).toBe(
      'application/one\napplication/two',
    );
    expect((await run('kv', 'get', TYPE, '-n', 'elsewhere', ...nats)).out).toBe('No resources found.');

    expect((await run('kv', 'delete', TYPE, 'one', ...nats)).out).toBe(
      'application.kumori.examples.converge.dev "one" deleted',
    );
    const missing = await run('kv', 'get', TYPE, 'one', ...nats);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('"one" not found');
    expect((await run('kv', 'delete', '-f', file, ...nats)).out).toBe(
      'application.kumori.examples.converge.dev "two" deleted',
    );
    expect((await run('kv', 'get', TYPE, '-o', 'name', ...nats)).out).toBe('');
  });

  it('reports a bad file, an unknown kind and an unreachable NATS with their codes, and writes nothing', async () => {
    const nats = ['--nats', url, '--bucket-prefix', prefix];
    const dir = tmp();
    const good = 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n';
    const cases = {
      'not-yaml.yaml': 'a: [unclosed\n',
      'no-kind.yaml': `${good}---\napiVersion: example.com/v1\nmetadata: {name: x}\n`,
      'scalar.json': '42',
      'bad-kind.yaml': 'apiVersion: example.com/v1\nkind: lower\nmetadata: {name: x}\n',
    };
    for (const [name, text] of Object.entries(cases)) {
      writeFileSync(join(dir, name), text);
      const result = await run('kv', 'apply', '-f', join(dir, name), ...nats);
      expect(result.code, name).toBe(1);
      expect(result.err, name).toContain('(CONVERGE_ERR_CLI_KV_FILE_INVALID)');
    }
    const absent = await run('kv', 'apply', '-f', join(dir, 'absent.yaml'), ...nats);
    expect(absent.err).toMatch(/absent\.yaml: cannot read it .*CONVERGE_ERR_CLI_KV_FILE_INVALID/);

    // The good Widget before the bad document was not written: no bucket holds Widgets.
    const unknown = await run('kv', 'get', 'widgets.example.com/v1', ...nats);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain(`no bucket ${prefix}example-com_v1_widgets`);
    expect(unknown.err).toContain('(CONVERGE_ERR_CLI_KV_UNKNOWN_KIND)');
    // …and asking did not create one.
    expect((await run('kv', 'delete', 'widgets.example.com/v1', 'w', ...nats)).err).toContain(
      'CONVERGE_ERR_CLI_KV_UNKNOWN_KIND',
    );

    const port = await closedPort();
    const down = await run('kv', 'get', TYPE, '--nats', `nats://127.0.0.1:${port}`);
    const badPrefix = await run('kv', 'get', TYPE, '--nats', url, '--bucket-prefix', 'no.dots');
    expect(badPrefix.err).toContain('bucketPrefix');
    expect(down.code).toBe(1);
    expect(down.err).toBe(
      `converge: NATS is not reachable at nats://127.0.0.1:${port}: start one with \`nats-server -js\` (Debian: apt-get install nats-server) or set NATS_URL (CONVERGE_ERR_CLI_NATS_UNREACHABLE)`,
    );
  });
});

describe('converge dev with the Kumori example', () => {
  let url: string;
  let prefix: string;

  beforeEach(async () => {
    url = await sharedNatsUrl();
    prefix = `dev${uniqueSuffix()}_`;
  });
  afterEach(async () => {
    await deleteBuckets(url, prefix);
  });

  it('runs it when NATS answers: an Application applied with converge kv gets its Deployment and ConfigMap, and Ready', async () => {
    const dir = tmp();
    const env = { NATS_URL: url, CONVERGE_NATS_BUCKET_PREFIX: prefix };
    const dev = spawnConverge(dir, ['dev', '--port', '0'], env);
    processes.push(dev);
    // The hint's last line: its two lines may arrive in two chunks (seen on a loaded run).
    await waitFor(
      'the kumori hint',
      () => (dev.output().includes(`get configmaps,deployments -A -l ${OWNED}`) ? true : undefined),
      dev.output,
    );
    expect(dev.output()).toMatch(/converge: running operator .*examples\/kumori\/operator\.ts/);
    expect(dev.output()).toContain(`converge: try  converge kv apply -f ${sample}`);
    expect(dev.output()).toContain(`get configmaps,deployments -A -l ${OWNED}`);

    const applied = await exec(process.execPath, [bin, 'kv', 'apply', '-f', sample], {
      cwd: dir,
      env: { ...process.env, ...env },
    });
    expect(applied.stdout.trim()).toBe('application.kumori.examples.converge.dev/hello created');

    const kubeconfig = join(dir, '.converge', 'kubeconfig');
    const names = await eventually('the secondaries in Kubernetes', async () => {
      const out = await kubectl(
        kubeconfig,
        'get',
        'configmaps,deployments',
        '-n',
        'default',
        '-l',
        OWNED,
        '-o',
        'name',
      );
      return out.includes('deployment.apps/hello') && out.includes('configmap/hello-config')
        ? out
        : undefined;
    });
    expect(names.trim().split('\n').sort()).toEqual(['configmap/hello-config', 'deployment.apps/hello']);
    expect(
      await kubectl(
        kubeconfig,
        'get',
        'deployment',
        'hello',
        '-n',
        'default',
        '-o',
        'jsonpath={.spec.replicas}',
      ),
    ).toBe('2');
    await eventually('Ready in NATS', async () => {
      const { stdout } = await exec(process.execPath, [bin, 'kv', 'get', TYPE, 'hello', '-o', 'json'], {
        env: { ...process.env, ...env },
      });
      const app = JSON.parse(stdout) as { status?: { conditions?: { type: string; status: string }[] } };
      return app.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
        ? true
        : undefined;
    });

    dev.child.kill('SIGINT');
    expect((await dev.exited).code).toBe(0);
  }, 90_000);

  it('says clearly when NATS is not reachable, and runs the other examples', async () => {
    const dir = tmp();
    const port = await closedPort();
    const dev = spawnConverge(dir, ['dev', '--port', '0'], { NATS_URL: `nats://127.0.0.1:${port}` });
    processes.push(dev);
    await waitFor(
      'the other examples',
      () => (dev.output().includes('converge: try  kubectl') ? true : undefined),
      dev.output,
    );
    expect(dev.output()).toContain(
      `converge: example kumori not started: NATS is not reachable at nats://127.0.0.1:${port}: start one with \`nats-server -js\` (Debian: apt-get install nats-server) or set NATS_URL`,
    );
    expect(dev.output()).not.toContain('converge kv apply');
    expect(dev.output()).toMatch(/running operator .*configmap-generator\/operator\.ts/);

    const kubeconfig = join(dir, '.converge', 'kubeconfig');
    await kubectl(kubeconfig, 'apply', '-f', generatorSample);
    await eventually('the generated ConfigMap', async () => {
      const out = await kubectl(kubeconfig, 'get', 'configmaps', '-n', 'default', '-o', 'name');
      return out.includes('configmap/greetings-0') ? true : undefined;
    });
    dev.child.kill('SIGINT');
    expect((await dev.exited).code).toBe(0);
  }, 90_000);
});
