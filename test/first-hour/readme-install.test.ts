/**
 * README "Install" and docs/guide/getting-started.md, followed as a new user does, from an empty
 * folder outside the repository with the machine's own Node (Node 20 on these machines; both say
 * what to add then): their shell lines are read from the documents and run with bash, their
 * `operator.ts` is saved from them, `npx converge dev ./operator.ts` runs it, and their kubectl lines
 * drive it: the README's to a copied and then garbage-collected ConfigMap, getting-started's to the
 * log line it promises. getting-started's install lines are the README's setup after a `mkdir` and
 * `cd` (checked), so its project is a copy of the README's, installed once. Only the tarballs' folder is this run's (the shared packs, in place of
 * `../converge/.packs/`, which the documents' first block makes with `npm run pack`).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMAND_MS, envFor, type Running, run, start, stopAll, WAIT_MS } from '../distribution/project.ts';
import { sharedPacks } from '../packs.ts';

const exec = promisify(execFile);
const repo = fileURLToPath(new URL('../..', import.meta.url));
const readme = readFileSync(join(repo, 'README.md'), 'utf8');
const work = mkdtempSync(join(tmpdir(), 'converge-first-hour-'));

afterAll(async () => {
  await stopAll();
  rmSync(work, { recursive: true, force: true });
});

/** The fenced blocks (`lang`) of the section `heading` of `doc` (the README unless given), in order. */
function blocks(heading: string, lang: string, doc = readme): string[] {
  const section = doc.split(/^## /m).find((s) => s.startsWith(`${heading}\n`));
  if (section === undefined) throw new Error(`no section "${heading}"`);
  return [...section.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map(
    (m) => m[1] as string,
  );
}

/** A block's command lines, without comments (a trailing `# …` is the README talking to the reader). */
function lines(block: string): string[] {
  return block
    .split('\n')
    .map((line) => line.replace(/\s+#\s.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** The machine's own Node: the first `node` on PATH outside any node_modules (what a new user has). */
async function systemNode(): Promise<{ path: string; version: string; tooOld: boolean }> {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir === '' || dir.includes('node_modules')) continue;
    const path = join(dir, 'node');
    if (!existsSync(path)) continue;
    const version = (await exec(path, ['--version'])).stdout.trim();
    const [major = 0, minor = 0] = version.slice(1).split('.').map(Number);
    return { path, version, tooOld: major < 22 || (major === 22 && minor < 18) };
  }
  throw new Error('no node on PATH outside node_modules');
}

/** The user's shell: the machine's PATH (no repository node_modules), the system Node first. */
function userEnv(node: string): NodeJS.ProcessEnv {
  const env = envFor(node);
  env.PATH = (env.PATH ?? '')
    .split(':')
    .filter((dir) => !dir.includes('node_modules'))
    .join(':');
  delete env.NODE_COMPILE_CACHE;
  delete env.KUBECONFIG;
  return env;
}

/**
 * The README's project: its setup lines run one by one in an empty folder (the `npm install -D
 * node@24` line only where the README says it is needed). Installed once per run: getting-started's
 * install lines are the same commands (checked there), so its test starts from a copy.
 */
let installed: Promise<string> | undefined;
function readmeProject(
  node: { readonly path: string; readonly tooOld: boolean },
  env: NodeJS.ProcessEnv,
  setup: string,
): Promise<string> {
  installed ??= (async () => {
    const packs = await sharedPacks(envFor(process.execPath));
    const project = join(work, 'my-operator');
    await exec('mkdir', [project]);
    const setupLines = lines(setup);
    expect(setupLines).toEqual(README_SETUP);
    for (const line of setupLines) {
      if (line === 'npm install -D node@24' && !node.tooOld) continue;
      const command = line.replaceAll('../converge/.packs/', `${packs}/`);
      await run('bash', ['-c', command], { cwd: project, env });
    }
    const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    // Every @converge package, and not create-converge (which makes projects).
    expect(Object.keys(manifest.dependencies).sort()).toEqual(
      ['apiserver', 'cli', 'kube', 'metrics', 'nats', 'runtime', 'simulation', 'store', 'tracing'].map(
        (p) => `@converge/${p}`,
      ),
    );
    if (node.tooOld)
      expect((await run('npx', ['node', '--version'], { cwd: project, env })).stdout).toMatch(/^v24\./);
    return project;
  })();
  return installed;
}

/** The README's setup lines, without their comments. */
const README_SETUP = [
  'npm init -y && npm pkg set type=module',
  'npm install -D node@24',
  'npm install ../converge/.packs/converge-*.tgz',
  'npm install -D typescript @types/node',
];

describe('README "Install" and getting-started, word for word, from an empty folder with the machine\'s Node', () => {
  it(
    'installs the tarballs, runs the README operator with converge dev, and the README kubectl lines see it copy and collect',
    async () => {
      const node = await systemNode();
      const env = userEnv(node.path);
      const [pack, setup, devBlock, kubectlBlock] = blocks('Install', 'sh');
      const [operator] = blocks('Install', 'ts');
      expect(lines(pack ?? '')).toContain('npm ci && npm run pack');
      const project = await readmeProject(node, env, setup ?? '');
      writeFileSync(join(project, 'operator.ts'), operator ?? '');
      expect(lines(devBlock ?? '')).toEqual(['npx converge dev ./operator.ts']);
      const [devCommand, ...devArgs] = (lines(devBlock ?? '')[0] ?? '').split(' ');
      const dev: Running = start(devCommand ?? 'npx', devArgs, { cwd: project, env });
      await dev.line(/"Starting workers"/);

      const kubectlLines = lines(kubectlBlock ?? '');
      expect(kubectlLines[0]).toBe('export KUBECONFIG=$PWD/.converge/kubeconfig');
      const kubeEnv = { ...env, KUBECONFIG: join(project, '.converge', 'kubeconfig') };
      for (const line of kubectlLines.slice(1)) {
        if (line.startsWith('kubectl get configmap greeting-copy')) {
          // What a user does: ask again until the operator has copied it.
          const copied = await eventually(
            () => run('bash', ['-c', line], { cwd: project, env: kubeEnv }),
            dev,
          );
          expect(copied.stdout).toContain('hello: world');
          expect(copied.stdout).toMatch(/ownerReferences:[\s\S]*name: greeting/);
        } else {
          await run('bash', ['-c', line], { cwd: project, env: kubeEnv });
        }
      }
      // "its copy is garbage-collected"
      await eventually(async () => {
        const got = await exec('kubectl', ['get', 'configmap', 'greeting-copy', '--request-timeout=20s'], {
          cwd: project,
          env: kubeEnv,
          timeout: 30_000,
        }).then(
          () => 'still there',
          (error: { stderr?: string }) => error.stderr ?? '',
        );
        if (!/NotFound/.test(got)) throw new Error(`greeting-copy: ${got}`);
        return got;
      }, dev);
      expect(dev.output()).toContain('"msg":"Copied"');
      expect(dev.output()).not.toMatch(/"level":"(error|fatal)"/);
      const exit = await dev.stop();
      expect(dev.output()).toMatch(/^converge: stopped$/m);
      expect(exit.code === 0 || exit.signal === 'SIGINT', JSON.stringify(exit)).toBe(true);
    },
    COMMAND_MS * 2,
  );

  it(
    "getting-started: its install lines are the README's (that project, installed once), its operator under npx converge dev, and the log line it shows for kubectl create configmap",
    async () => {
      const node = await systemNode();
      const env = userEnv(node.path);
      const guide = readFileSync(join(repo, 'docs', 'guide', 'getting-started.md'), 'utf8');
      const [, setup] = blocks('Install', 'sh', guide);
      const [operator] = blocks('Write an operator', 'ts', guide);
      const [devBlock, kubectlBlock] = blocks('Run it', 'sh', guide);
      // Its install lines, as typed into one terminal, are the README's setup after a mkdir and
      // cd: the same commands, which the README test ran. This project starts from a copy of that
      // one (without the README's operator and its converge dev state), as installing again would
      // run the same npm commands a second time.
      const guideLines = lines(setup ?? '');
      expect(guideLines).toEqual(['mkdir my-operator && cd my-operator', ...README_SETUP]);
      const [, readmeSetup] = blocks('Install', 'sh');
      const installedProject = await readmeProject(node, env, readmeSetup ?? '');
      const folder = mkdtempSync(join(work, 'getting-started-'));
      const project = join(folder, 'my-operator');
      await exec('cp', ['-a', installedProject, project]);
      rmSync(join(project, '.converge'), { recursive: true, force: true });
      rmSync(join(project, 'operator.ts'), { force: true });
      writeFileSync(join(project, 'operator.ts'), operator ?? '');
      const [devCommand, ...devArgs] = (lines(devBlock ?? '')[0] ?? '').split(' ');
      expect([devCommand, ...devArgs].join(' ')).toBe('npx converge dev ./operator.ts');
      const dev: Running = start(devCommand ?? 'npx', devArgs, { cwd: project, env });
      await dev.line(/"Starting workers"/);
      const kubectlLines = lines(kubectlBlock ?? '');
      expect(kubectlLines).toEqual([
        'export KUBECONFIG=$PWD/.converge/kubeconfig',
        'kubectl create configmap hello --from-literal=greeting=hi',
      ]);
      await run('bash', ['-ec', kubectlLines.join('\n')], { cwd: project, env });
      // The guide: the first terminal shows a line like {"level":"info","msg":"ConfigMap changed",…}.
      const [logged] = await dev.line(/^\{(?=.*"msg":"ConfigMap changed")(?=.*"name":"hello").*\}$/m);
      expect(JSON.parse(logged)).toMatchObject({
        level: 'info',
        msg: 'ConfigMap changed',
        controller: 'configmap',
        namespace: 'default',
        name: 'hello',
        keys: ['greeting'],
      });
      const exit = await dev.stop();
      expect(dev.output()).toMatch(/^converge: stopped$/m);
      expect(exit.code === 0 || exit.signal === 'SIGINT', JSON.stringify(exit)).toBe(true);
    },
    COMMAND_MS * 2,
  );
});

/** Retries `attempt` until it resolves (a hang detector of WAIT_MS), as a user at a terminal does. */
async function eventually<T>(attempt: () => Promise<T>, context: Running): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline)
        throw new Error(
          `still failing after ${WAIT_MS} ms: ${(error as Error).message}\n${context.output()}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
