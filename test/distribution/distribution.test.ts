/**
 * What users install is what CI checks: every workspace package is packed (its `prepack` builds
 * dist/), the tarballs are installed into a fresh project outside the repository, and there an
 * operator written against the published surface is type-checked (`moduleResolution: nodenext`),
 * run with plain `node` against an in-process embedded API server, run by `npx converge dev`,
 * and run by `npx converge run` against `npx converge serve` — driven by the real kubectl — on the
 * Node the repository pins and on the oldest Node the packages' `engines` allow.
 */
import {
  copyFileSync,
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
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedPacks } from '../packs.ts';
import { COMMAND_MS, envFor, installNode, oldestNode, type Running, run, start, stopAll } from './project.ts';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const fixture = fileURLToPath(new URL('./fixture/', import.meta.url));
const PACKAGES = [
  'runtime',
  'store',
  'apiserver',
  'kube',
  'nats',
  'metrics',
  'tracing',
  'simulation',
  'cli',
] as const;
const pinned = process.execPath;
/**
 * One step: a type check, or a server and an operator started, driven and stopped. A hang
 * detector: the type check takes ~15 s alone and took 102 s with a second suite beside this one
 * (load ~17 on 2 cores).
 */
const TEST_MS = 480_000;

let work: string;
let project: string;
let packs: string;
let oldest: string;
const tarballs = new Map<string, string>();

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'converge-distribution-'));
  project = join(work, 'project');
  const env = envFor(pinned);
  packs = await sharedPacks(env);
  for (const file of readdirSync(packs)) {
    const pkg = /^converge-([a-z]+)-\d+\.\d+\.\d+\.tgz$/.exec(file)?.[1];
    if (pkg !== undefined) tarballs.set(pkg, join(packs, file));
  }
  const [, oldestBinary] = await Promise.all([
    install(env),
    installNode(
      oldestNode(join(repo, 'packages', 'runtime', 'package.json')),
      join(repo, 'node_modules', '.cache'),
      env,
    ),
  ]);
  oldest = oldestBinary;
}, COMMAND_MS * 3);

afterAll(async () => {
  await stopAll();
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

/** A fresh project that depends on the tarballs (as a user depends on the published packages). */
async function install(env: NodeJS.ProcessEnv): Promise<void> {
  const versionOf = (name: string): string =>
    (
      JSON.parse(readFileSync(join(repo, 'node_modules', name, 'package.json'), 'utf8')) as {
        version: string;
      }
    ).version;
  const dependencies = Object.fromEntries(
    PACKAGES.map((pkg) => [`@converge/${pkg}`, `file:${tarballs.get(pkg) ?? `missing-${pkg}`}`]),
  );
  rmSync(project, { recursive: true, force: true });
  mkdirSync(project);
  const manifest = {
    name: 'my-operator',
    private: true,
    type: 'module',
    dependencies,
    // TypeScript 7, the native compiler: what `npm install -D typescript` installs today and what
    // the repository builds the declarations with (scripts/tsc.ts).
    devDependencies: {
      typescript: versionOf('typescript-native'),
      '@types/node': versionOf('@types/node'),
    },
  };
  writeFileSync(join(project, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  for (const file of readdirSync(fixture)) copyFileSync(join(fixture, file), join(project, file));
  for (const [name, code] of readmeExamples()) writeFileSync(join(project, name), code);
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: project, env });
}

/**
 * The TypeScript examples of the README, the packages' READMEs and getting-started, as files of the
 * project (`readme-<package>-<n>.ts`), so the type check covers what users copy first.
 */
function readmeExamples(): [string, string][] {
  // The other guides show fragments of bigger operators; getting-started is whole, like the READMEs.
  const sources = [
    ['guide-getting-started', join(repo, 'docs', 'guide', 'getting-started.md')],
    ['root', join(repo, 'README.md')],
    ...PACKAGES.map((p) => [p, join(repo, 'packages', p, 'README.md')]),
  ];
  return sources.flatMap(([name, file]) =>
    [...readFileSync(file as string, 'utf8').matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map(
      (match, i): [string, string] => [`readme-${name}-${i + 1}.ts`, match[1] as string],
    ),
  );
}

/** `tar tzf`: the paths in a tarball, without npm's leading `package/`. */
async function contents(tarball: string): Promise<string[]> {
  const { stdout } = await run('tar', ['tzf', tarball], { cwd: work, env: envFor(pinned) });
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.replace(/^package\//, ''));
}

describe('the packed tarballs', { timeout: TEST_MS }, () => {
  it('hold dist/ for every export, a README and the LICENSE, and no tests or build state', async () => {
    expect([...tarballs.keys()].sort()).toEqual([...PACKAGES].sort());
    for (const pkg of PACKAGES) {
      const files = await contents(tarballs.get(pkg) as string);
      const manifest = JSON.parse(readFileSync(join(repo, 'packages', pkg, 'package.json'), 'utf8')) as {
        exports: Record<string, string | null | Record<string, string>>;
        bin?: Record<string, string>;
      };
      expect(files, pkg).toContain('README.md');
      expect(files, pkg).toContain('LICENSE');
      for (const [subpath, target] of Object.entries(manifest.exports)) {
        if (target === null || typeof target === 'string') continue;
        for (const condition of ['types', 'default'])
          expect(files, `${pkg} ${subpath} ${condition}`).toContain(
            (target[condition] as string).replace(/^\.\//, ''),
          );
      }
      for (const bin of Object.values(manifest.bin ?? {}))
        expect(files, pkg).toContain(bin.replace(/^\.\//, ''));
      const unwanted = files.filter((f) =>
        /\.test\.|test-support|test-harness|testdata\/|tsbuildinfo/.test(f),
      );
      expect(unwanted, pkg).toEqual([]);
    }
    const cli = await contents(tarballs.get('cli') as string);
    expect(cli).toContain('dist/examples/configmap-generator/operator.js');
    expect(cli).toContain('dist/examples/configmap-generator/manifests/crd.yaml');
  });

  it('type-check a user operator and the README examples with moduleResolution nodenext', async () => {
    expect(readmeExamples().length).toBeGreaterThanOrEqual(PACKAGES.length);
    const { stdout } = await run('npx', ['tsc', '-p', 'tsconfig.json'], {
      cwd: project,
      env: envFor(pinned),
    });
    expect(stdout).toBe('');
  });
});

/** One seed's simulation report per Node, compared once both ran. */
const simulated: string[] = [];

for (const [label, node] of [
  ['the pinned Node', () => pinned],
  ['the oldest Node engines allow', () => oldest],
] as const) {
  describe(`in a project outside the repository, on ${label}`, { timeout: TEST_MS }, () => {
    it('runs on the expected Node', async () => {
      const { stdout } = await run('node', ['--version'], { cwd: project, env: envFor(node()) });
      const expected =
        node() === pinned
          ? process.version
          : `v${oldestNode(join(repo, 'packages', 'runtime', 'package.json'))}`;
      expect(stdout.trim()).toBe(expected);
    });

    it('imports every package entry point', async () => {
      const entries = [
        ...PACKAGES.filter((p) => p !== 'cli').map((p) => `@converge/${p}`),
        '@converge/cli',
        '@converge/runtime/testing',
      ];
      const script = `for (const e of ${JSON.stringify(entries)}) { const m = await import(e); if (Object.keys(m).length === 0) throw new Error(e + ' exports nothing'); } console.log('ok');`;
      const { stdout } = await run('node', ['--input-type=module', '-e', script], {
        cwd: project,
        env: envFor(node()),
      });
      expect(stdout.trim()).toBe('ok');
    });

    it('runs the operator with plain node against an in-process embedded API server', async () => {
      const { stdout } = await run('node', ['embedded.ts'], { cwd: project, env: envFor(node()) });
      expect(stdout).toContain('copied {"hello":"world"} owned by greeting');
      expect(stdout).toMatch(/created from \d{5} bytes of YAML/);
    });

    it('runs a scenario of it under npx converge simulate, the same trace on both Nodes', async () => {
      const { stdout } = await run('npx', ['converge', 'simulate', './scenario.ts', '--seeds', '25'], {
        cwd: project,
        env: envFor(node()),
      });
      expect(stdout).toMatch(
        /^ok copies: 25 seeds, faults stale-reads,.* — \d+ reconciles, \d+ faults injected, /,
      );
      // One seed's whole report as JSON: byte for byte the same on the pinned and the oldest Node.
      const json = await run('npx', ['converge', 'simulate', './scenario.ts', '--seed', '7', '--json'], {
        cwd: project,
        env: envFor(node()),
      });
      const report = JSON.parse(json.stdout) as { passed: boolean; elapsedMs?: number };
      expect(report.passed).toBe(true);
      delete report.elapsedMs;
      simulated.push(JSON.stringify(report));
      if (simulated.length === 2) expect(simulated[1]).toBe(simulated[0]);
    });

    it('runs it under npx converge dev, driven by kubectl', async () => {
      const { process: dev, kubeconfig } = converge('dev', ['./operator.ts'], envFor(node()));
      try {
        await dev.line(/converge: running operator .*operator\.ts/);
        await copiedByKubectl(kubeconfig, 'dev');
        // The reconciler's ctx.logger writes through converge's logger, with the request's fields.
        const copied =
          dev
            .output()
            .split('\n')
            .find((l) => l.includes('"msg":"Copied"')) ?? '';
        expect(copied, dev.output()).toContain('"controller":"copier"');
        expect(copied).toContain('"name":"dev"');
        expect(copied).toContain('"result":"created"');
      } finally {
        const exit = await dev.stop();
        expectCleanStop(exit, dev);
      }
    });

    it('runs it under npx converge run against npx converge serve, driven by kubectl', async () => {
      const env = envFor(node());
      const { process: serve, kubeconfig } = converge('serve', [], env);
      let operator: Running | undefined;
      try {
        await serve.line(/converge: serving Kubernetes API at/);
        // The README's command, with the probes on a free port: its default :8081 is one port for the
        // whole machine, and a second suite (or anything else) beside this one may hold it.
        operator = start(
          'npx',
          [
            'converge',
            'run',
            './operator.ts',
            '--kubeconfig',
            kubeconfig,
            '--health-probe-bind-address',
            '127.0.0.1:0',
          ],
          { cwd: project, env },
        );
        const [, probes] = await operator.line(/health probes at (http:\/\/\S+)\/healthz/);
        await copiedByKubectl(kubeconfig, 'run');
        // Synced and copying: the kubelet's readiness probe says so.
        expect((await fetch(`${probes}/readyz`)).status).toBe(200);
      } finally {
        if (operator !== undefined) expectCleanStop(await operator.stop(), operator);
        expectCleanStop(await serve.stop(), serve);
      }
    });
  });
}

describe('a TypeScript module on a Node that does not strip types', { timeout: TEST_MS }, () => {
  it('is refused with a message naming the module and what to do', async () => {
    const env = envFor(pinned, { NODE_OPTIONS: '--no-experimental-strip-types' });
    const { process: dev } = converge('dev', ['./operator.ts'], env);
    const exit = await Promise.race([
      dev.exited,
      dev.line(/never printed/).then(
        () => undefined,
        () => undefined,
      ),
    ]);
    await dev.stop();
    expect(exit?.code, dev.output()).toBe(1);
    expect(dev.output()).toMatch(
      /operator module \.\/operator\.ts is TypeScript, and this Node \(v[\d.]+\) does not strip types/,
    );
  });
});

describe('bare converge dev outside the repository', { timeout: TEST_MS }, () => {
  it('runs the example operators shipped in the CLI package, and its hint applies their sample', async () => {
    const env = envFor(pinned, { NATS_URL: 'nats://127.0.0.1:1' });
    const { process: dev, kubeconfig } = converge('dev', [], env);
    try {
      await dev.line(/converge: running operator .*configmap-generator\/operator\.js/);
      // The hint names the sample inside the installed package; apply exactly what it says.
      const [, sample] = await dev.line(/^converge: try {2}kubectl --kubeconfig \S+ apply -f (\S+)$/m);
      expect(sample).toBe(
        'node_modules/@converge/cli/dist/examples/configmap-generator/manifests/sample.yaml',
      );
      const kubectl = envFor(pinned, { KUBECONFIG: kubeconfig });
      await run('kubectl', ['apply', '-f', sample as string], { cwd: project, env: kubectl });
      await run('kubectl', ['wait', '--for=create', 'configmap/greetings-0', '--timeout=60s'], {
        cwd: project,
        env: kubectl,
      });
      expect(dev.output()).toMatch(/example kumori not started: NATS is not reachable/);
      // The poller example's client library (postgres) is a dependency of the CLI: installed, it runs.
      expect(dev.output()).toMatch(/converge: running operator .*poller\/operator\.js/);
    } finally {
      const exit = await dev.stop();
      expectCleanStop(exit, dev);
    }
  });
});

/** `npx converge <command> [modules…]` in the project, on a free port with its own data dir and kubeconfig. */
function converge(
  command: 'dev' | 'serve',
  modules: readonly string[],
  env: NodeJS.ProcessEnv,
): { process: Running; kubeconfig: string } {
  const data = mkdtempSync(join(work, `${command}-`));
  const kubeconfig = join(data, 'kubeconfig');
  const args = ['converge', command, ...modules, '--port', '0', '--data-dir', join(data, 'store')];
  return { process: start('npx', [...args, '--kubeconfig', kubeconfig], { cwd: project, env }), kubeconfig };
}

/**
 * Ctrl-C (SIGINT to the process group) stopped converge cleanly: it said so, and npx ended with
 * its exit code 0 or, as npm does when it was interrupted itself, by the same signal.
 */
function expectCleanStop(
  exit: { code: number | null; signal: NodeJS.Signals | null },
  process: Running,
): void {
  expect(process.output()).toMatch(/^converge: stopped$/m);
  expect(
    exit.code === 0 || (exit.code === null && exit.signal === 'SIGINT'),
    `${JSON.stringify(exit)}\n${process.output().slice(-3000)}`,
  ).toBe(true);
}

/** kubectl creates a labelled ConfigMap; the operator's copy appears with the same data. */
async function copiedByKubectl(kubeconfig: string, name: string): Promise<void> {
  const env = envFor(pinned, { KUBECONFIG: kubeconfig });
  const cwd = project;
  await run('kubectl', ['create', 'configmap', name, '--from-literal=hello=world'], { cwd, env });
  await run('kubectl', ['label', 'configmap', name, 'copy=yes'], { cwd, env });
  await run('kubectl', ['wait', '--for=create', `configmap/${name}-copy`, '--timeout=60s'], { cwd, env });
  await run(
    'kubectl',
    ['wait', '--for=jsonpath={.data.hello}=world', `configmap/${name}-copy`, '--timeout=60s'],
    {
      cwd,
      env,
    },
  );
  const { stdout } = await run(
    'kubectl',
    ['get', 'configmap', `${name}-copy`, '-o', 'jsonpath={.metadata.ownerReferences[0].name}'],
    {
      cwd,
      env,
    },
  );
  expect(stdout).toBe(name);
}
