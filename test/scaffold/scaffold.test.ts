/**
 * The scaffold end to end, as a user meets it: the packages are packed, `create-converge` runs from
 * its tarball (what `npm create converge` runs) into a folder outside the repository, depending on
 * the tarballs (`--packages`); there `npm install`, the project's own `npm test`, `converge create
 * api` for a second kind and `npm test` again, `converge dev` driven by the real kubectl, `converge
 * manifests` applied to `converge serve` with server-side apply and strict validation, drift
 * between a kind and its committed CRD caught by `--check`, and bad input refused with typed errors.
 */
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  COMMAND_MS,
  envFor,
  installNode,
  oldestNode,
  type Running,
  run,
  start,
  stopAll,
} from '../distribution/project.ts';
import { sharedPacks } from '../packs.ts';

const exec = promisify(execFile);
const repo = fileURLToPath(new URL('../..', import.meta.url));
const env = envFor(process.execPath);
/** One step: an install and a test run, or a server and an operator started, driven and stopped. */
const STEP_MS = 120_000;

let work: string;
let packs: string;
let project: string;
/** The oldest Node the packages' engines allow (22.18): the second npm test runs on it. */
let oldest: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'converge-scaffold-'));
  project = join(work, 'my-operator');
  const node = installNode(
    oldestNode(join(repo, 'packages', 'cli', 'package.json')),
    // The distribution test installs the same Node into the same folder: one of them does it.
    join(repo, 'node_modules', '.cache'),
    env,
  );
  packs = await sharedPacks(env);
  const tarballs = readdirSync(packs).filter((f) => f.endsWith('.tgz'));
  const creator = tarballs.find((f) => f.startsWith('create-converge-'));
  if (creator === undefined) throw new Error(`npm run pack made no create-converge tarball: ${tarballs}`);
  // What `npm create converge` does: install create-converge alone (it depends on nothing: converge
  // init is bundled into it) and run it; the project it makes depends on the tarballs.
  const { stdout } = await run(
    'npm',
    [
      'exec',
      '--yes',
      '--prefer-offline',
      `--package=${join(packs, creator)}`,
      '--',
      'create-converge',
      'my-operator',
      '--packages',
      packs,
      '--group',
      'webapp.example.com',
      '--kind',
      'Guestbook',
    ],
    { cwd: work, env },
  );
  expect(stdout).toContain(`converge: created my-operator in ${project}`);
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: project, env });
  oldest = await node;
}, COMMAND_MS * 3);

afterAll(async () => {
  await stopAll();
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

/** `converge` of the project's installed @converge/cli, run with node (no npx in between). */
function converge(args: readonly string[], cwd = project): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, [join(project, 'node_modules/@converge/cli/bin/converge.js'), ...args], {
    cwd,
    env,
  });
}

/** Like {@link converge}, for a command expected to fail: its exit code and stderr. */
async function convergeFails(
  args: readonly string[],
  cwd: string,
): Promise<{ code: number; stderr: string }> {
  const bin = join(project, 'node_modules/@converge/cli/bin/converge.js');
  try {
    await exec(process.execPath, [bin, ...args], { cwd, env, timeout: COMMAND_MS });
  } catch (error) {
    const e = error as { code?: unknown; stderr?: string };
    if (typeof e.code !== 'number') throw error;
    return { code: e.code, stderr: e.stderr ?? '' };
  }
  throw new Error(`converge ${args.join(' ')} succeeded`);
}

/**
 * A Node older than the packages' engines allow: the machine's own (Debian's, on PATH outside any
 * node_modules) when it is older, as on a fresh machine whose system Node is 20; else Node 22.17
 * from the registry, so the check never depends on the machine.
 */
async function olderNode(): Promise<string> {
  const path = (process.env.PATH ?? '')
    .split(':')
    .filter((dir) => dir !== '' && !dir.includes('node_modules'));
  for (const dir of path) {
    const candidate = join(dir, 'node');
    if (!existsSync(candidate)) continue;
    const { stdout } = await exec(candidate, ['--version']);
    const [major = 0, minor = 0] = stdout.trim().slice(1).split('.').map(Number);
    if (major < 22 || (major === 22 && minor < 18)) return candidate;
    break;
  }
  return installNode('22.17.0', join(repo, 'node_modules', '.cache'), env);
}

/** The passed and failed counts node --test reported (spec or TAP reporter). */
function testCounts(output: string): { pass: number; fail: number } {
  const count = (what: string): number =>
    Number(new RegExp(`^(?:ℹ|#) ${what} (\\d+)$`, 'm').exec(output)?.[1]);
  return { pass: count('pass'), fail: count('fail') };
}

/** A running `converge dev|serve` in the project on a free port, with its own data dir and kubeconfig. */
function server(command: 'dev' | 'serve', args: readonly string[]): { process: Running; kubeconfig: string } {
  const data = mkdtempSync(join(work, `${command}-`));
  const kubeconfig = join(data, 'kubeconfig');
  const process = start(
    'npx',
    [
      'converge',
      command,
      ...args,
      '--port',
      '0',
      '--data-dir',
      join(data, 'store'),
      '--kubeconfig',
      kubeconfig,
    ],
    { cwd: project, env },
  );
  return { process, kubeconfig };
}

function kubectl(kubeconfig: string, args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  return run('kubectl', args, { cwd: project, env: { ...env, KUBECONFIG: kubeconfig } });
}

/** Ctrl-C stopped it cleanly. */
async function stopped(process: Running): Promise<void> {
  const exit = await process.stop();
  expect(process.output()).toMatch(/^converge: stopped$/m);
  expect(exit.code === 0 || (exit.code === null && exit.signal === 'SIGINT'), JSON.stringify(exit)).toBe(
    true,
  );
}

describe('a project made by create-converge, outside the repository', { timeout: STEP_MS }, () => {
  it('holds the operator module, the kind, its controller and test, and depends on the tarballs', () => {
    for (const file of [
      'package.json',
      'tsconfig.json',
      'README.md',
      '.gitignore',
      'src/operator.ts',
      'src/kinds/guestbook.ts',
      'src/controllers/guestbook.ts',
      'test/guestbook.test.ts',
    ])
      expect(existsSync(join(project, file)), file).toBe(true);
    const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'));
    for (const pkg of ['runtime', 'kube', 'apiserver', 'cli'])
      expect(manifest.dependencies[`@converge/${pkg}`]).toMatch(
        new RegExp(`^file:.*converge-${pkg}-[\\d.]+\\.tgz$`),
      );
  });

  it('came from create-converge alone: a package with no dependencies, converge init bundled in it', async () => {
    const creator = readdirSync(packs).find((f) => f.startsWith('create-converge-')) as string;
    const { stdout: listed } = await run('tar', ['tzf', join(packs, creator)], { cwd: work, env });
    expect(
      listed
        .split('\n')
        .filter((l) => l !== '')
        .sort(),
    ).toEqual(
      [
        'package/LICENSE',
        'package/README.md',
        'package/bin/create-converge.js',
        'package/dist/create.js',
        'package/package.json',
      ].sort(),
    );
    const { stdout: manifest } = await run('tar', ['xzfO', join(packs, creator), 'package/package.json'], {
      cwd: work,
      env,
    });
    const parsed = JSON.parse(manifest) as Record<string, unknown>;
    for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies'])
      expect(parsed[field], field).toBeUndefined();
  });

  it('passes its own npm test: tsc --noEmit, then node --test against the embedded API server', async () => {
    const { stdout } = await run('npm', ['test'], { cwd: project, env });
    expect(testCounts(stdout), stdout).toEqual({ pass: 3, fail: 0 });
  });

  it('on a Node older than engines allow, npm test stops with the version sentence (not a glob or module error)', async () => {
    const tooOld = await olderNode();
    const onTooOld = envFor(tooOld);
    const { stdout: version } = await run('node', ['--version'], { cwd: project, env: onTooOld });
    const failed = await exec('npm', ['test'], { cwd: project, env: onTooOld, timeout: COMMAND_MS }).then(
      () => undefined,
      (error: { code?: unknown; stdout?: string; stderr?: string }) => error,
    );
    expect(failed, `npm test passed on ${version}`).toBeDefined();
    expect(failed?.code).not.toBe(0);
    expect(failed?.stderr).toContain(
      `converge: Node ${version.trim().slice(1)} is too old; Converge needs Node 22.18 or newer`,
    );
    expect(`${failed?.stdout}${failed?.stderr}`).not.toMatch(/Could not find|ERR_MODULE|SyntaxError/);
  });

  it('converge create api adds a cluster-scoped kind, and npm test passes with its test too, on the oldest Node engines allow', async () => {
    const { stdout } = await converge([
      'create',
      'api',
      '--group',
      'webapp.example.com',
      '--version',
      'v1',
      '--kind',
      'Policy',
      '--cluster-scoped',
    ]);
    expect(stdout).toContain('converge: added Policy (webapp.example.com/v1)');
    expect(readFileSync(join(project, 'src/operator.ts'), 'utf8')).toContain('policyController(manager);');
    const onOldest = envFor(oldest);
    const { stdout: version } = await run('node', ['--version'], { cwd: project, env: onOldest });
    expect(version.trim()).toBe(`v${oldestNode(join(project, 'package.json'))}`);
    const { stdout: tested } = await run('npm', ['test'], { cwd: project, env: onOldest });
    expect(testCounts(tested), tested).toEqual({ pass: 6, fail: 0 });
  });

  it('runs under a bare converge dev: kubectl creates a Guestbook and a Policy, their status converges', async () => {
    // No module: converge dev runs the one package.json names (converge.module), as npm run dev does.
    const { process: dev, kubeconfig } = server('dev', []);
    try {
      await dev.line(/converge: running operator src\/operator\.ts/);
      // It says that it installed the CRDs of the project's defineKind kinds (a fresh data dir).
      for (const crd of ['guestbooks.webapp.example.com', 'policies.webapp.example.com']) {
        expect(dev.output()).toContain(
          `converge: created CustomResourceDefinition ${crd} (from the defineKind kinds src/operator.ts wires)`,
        );
      }
      const objects = join(work, 'objects.yaml');
      writeFileSync(
        objects,
        [
          'apiVersion: webapp.example.com/v1alpha1',
          'kind: Guestbook',
          'metadata: { name: hello, namespace: default }',
          'spec: { message: from kubectl }',
          '---',
          'apiVersion: webapp.example.com/v1',
          'kind: Policy',
          'metadata: { name: strict }',
          'spec: { message: cluster-wide }',
          '',
        ].join('\n'),
      );
      await kubectl(kubeconfig, ['apply', '-f', objects]);
      await kubectl(kubeconfig, [
        'wait',
        '--for=condition=Ready',
        '--timeout=60s',
        'guestbook/hello',
        'policy/strict',
      ]);
      const { stdout: message } = await kubectl(kubeconfig, [
        'get',
        'configmap',
        'guestbook-hello',
        '-o',
        'jsonpath={.data.message}',
      ]);
      expect(message).toBe('from kubectl');
      const { stdout: row } = await kubectl(kubeconfig, ['get', 'guestbooks', 'hello', '--no-headers']);
      expect(
        row
          .trim()
          .split(/\s{2,}/)
          .slice(0, 3),
      ).toEqual(['hello', 'from kubectl', 'True']);
      const { stdout: policy } = await kubectl(kubeconfig, [
        'get',
        'configmap',
        'policy-strict',
        '-n',
        'default',
        '-o',
        'jsonpath={.metadata.ownerReferences[0].kind}',
      ]);
      expect(policy).toBe('Policy');
    } finally {
      await stopped(dev);
    }
  });

  it('converge manifests writes config/ that converge serve accepts with server-side apply and strict validation', async () => {
    const { stdout } = await converge(['manifests']);
    expect(stdout).toContain('apply with kubectl apply -k config');
    for (const file of [
      'config/kustomization.yaml',
      'config/crd/guestbooks.webapp.example.com.yaml',
      'Dockerfile',
    ])
      expect(existsSync(join(project, file)), file).toBe(true);
    const { process: serve, kubeconfig } = server('serve', []);
    try {
      await serve.line(/converge: serving Kubernetes API at/);
      const { stdout: applied } = await kubectl(kubeconfig, [
        'apply',
        '--server-side',
        '--validate=strict',
        '-k',
        'config',
      ]);
      const lines = applied.trim().split('\n');
      expect(lines.length).toBeGreaterThanOrEqual(8);
      for (const line of lines) expect(line).toMatch(/ serverside-applied$/);
      expect(applied).toContain(
        'customresourcedefinition.apiextensions.k8s.io/guestbooks.webapp.example.com',
      );
      expect(applied).toContain('customresourcedefinition.apiextensions.k8s.io/policies.webapp.example.com');
      expect(applied).toContain('deployment.apps/my-operator');
      await kubectl(kubeconfig, [
        'wait',
        '--for=condition=Established',
        '--timeout=30s',
        'crd/guestbooks.webapp.example.com',
        'crd/policies.webapp.example.com',
      ]);
    } finally {
      await stopped(serve);
    }
  });

  it('runs as its ServiceAccount under converge dev --as-service-account: the generated RBAC suffices', async () => {
    const { process: dev, kubeconfig } = server('dev', ['--as-service-account', 'src/operator.ts']);
    try {
      await dev.line(/converge: running operator src\/operator\.ts/);
      expect(dev.output()).toContain('system:serviceaccount:my-operator-system:my-operator');
      const object = join(work, 'as-service-account.yaml');
      writeFileSync(
        object,
        [
          'apiVersion: webapp.example.com/v1alpha1',
          'kind: Guestbook',
          'metadata: { name: restricted, namespace: default }',
          'spec: { message: as the ServiceAccount }',
          '---',
          'apiVersion: webapp.example.com/v1',
          'kind: Policy',
          'metadata: { name: restricted }',
          'spec: { message: as the ServiceAccount }',
          '',
        ].join('\n'),
      );
      await kubectl(kubeconfig, ['apply', '-f', object]);
      await kubectl(kubeconfig, [
        'wait',
        '--for=condition=Ready',
        '--timeout=60s',
        'guestbook/restricted',
        'policy/restricted',
      ]);
      const { stdout } = await kubectl(kubeconfig, [
        'get',
        'configmap',
        'guestbook-restricted',
        '-o',
        'jsonpath={.data.message}',
      ]);
      expect(stdout).toBe('as the ServiceAccount');
      expect(dev.output()).not.toMatch(/forbidden/i);
    } finally {
      await stopped(dev);
    }
  });

  it('converge manifests --check passes, and fails naming the CRD once the kind changes', async () => {
    await converge(['manifests', '--check']);
    const kind = join(project, 'src/kinds/guestbook.ts');
    const source = readFileSync(kind, 'utf8');
    writeFileSync(kind, source.replace('maxLength: 1024', 'maxLength: 2048'));
    try {
      const { code, stderr } = await convergeFails(['manifests', '--check'], project);
      expect(code).toBe(1);
      expect(stderr).toContain('out of date: config/crd/guestbooks.webapp.example.com.yaml');
    } finally {
      writeFileSync(kind, source);
    }
  });
});

describe('bad input to the scaffold', { timeout: STEP_MS }, () => {
  it('init into a folder that is not empty is a typed error, and writes nothing', async () => {
    const { code, stderr } = await convergeFails(['init', project], work);
    expect(code).toBe(1);
    expect(stderr).toContain('CONVERGE_ERR_CLI_SCAFFOLD_DIR_NOT_EMPTY');
    const notes = join(work, 'notes');
    mkdirSync(notes);
    writeFileSync(join(notes, 'todo.txt'), 'mine');
    expect((await convergeFails(['init', notes], work)).code).toBe(1);
    expect(readdirSync(notes)).toEqual(['todo.txt']);
  });

  it('create api in a project whose operator lost its marker is a typed error', async () => {
    const operator = join(project, 'src/operator.ts');
    const source = readFileSync(operator, 'utf8');
    writeFileSync(operator, source.replace('// +converge:scaffold:controllers', ''));
    try {
      const args = ['create', 'api', '--group', 'a.example.com', '--version', 'v1', '--kind', 'Extra'];
      const { code, stderr } = await convergeFails(args, project);
      expect(code).toBe(1);
      expect(stderr).toContain('CONVERGE_ERR_CLI_SCAFFOLD_MARKER_MISSING');
      expect(existsSync(join(project, 'src/kinds/extra.ts'))).toBe(false);
    } finally {
      writeFileSync(operator, source);
    }
  });

  it('a group, version or kind the API server would refuse is a usage error (exit 2) naming the flag; nothing is written', async () => {
    const flag = fc.constantFrom('--group', '--version', '--kind');
    const value = fc.oneof(
      fc.string({ minLength: 1, maxLength: 12 }),
      fc.constantFrom('Example', 'v1beta', 'guestbook', 'a..b', 'V1', 'Guest_book'),
    );
    // Independently of the CLI's own checks: what Kubernetes allows for each.
    const valid: Record<string, RegExp> = {
      '--group': /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/,
      '--version': /^v[1-9]\d*((alpha|beta)[1-9]\d*)?$/,
      '--kind': /^[A-Z][A-Za-z0-9]*$/,
    };
    await fc.assert(
      fc.asyncProperty(
        // A leading dash reads as an option, and a NUL cannot be passed in a process's arguments.
        fc
          .tuple(flag, value)
          .filter(([f, v]) => !valid[f]?.test(v) && !v.startsWith('-') && !v.includes('\0')),
        async ([f, v]) => {
          const dir = mkdtempSync(join(work, 'bad-'));
          const { code, stderr } = await convergeFails(['init', dir, f, v], work);
          expect(code, stderr).toBe(2);
          expect(stderr).toContain(`converge init: ${f} must be`);
          expect(readdirSync(dir)).toEqual([]);
        },
      ),
      { numRuns: 6 },
    );
  });
});
