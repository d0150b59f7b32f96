import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crdsOf, defineKind, Type } from '@converge/kube';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../errors.ts';
import { main } from '../main.ts';
import {
  CONTROLLERS_MARKER,
  cliVersion,
  createApi,
  DEV_DEPENDENCIES,
  IMPORTS_MARKER,
  INIT_DEFAULTS,
  initProject,
  kindNames,
  parseCreate,
  parseInit,
  ScaffoldError,
  ScaffoldErrorCodes,
  wireController,
} from './index.ts';

const work = mkdtempSync(join(tmpdir(), 'converge-scaffold-unit-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let folders = 0;
/** A fresh folder path under the test's temporary folder (not created). */
const fresh = (name = 'my-operator'): string => join(work, `${folders++}`, name);

/** Runs `main(argv)` in this process; resolves with the exit code and what it printed. */
async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l), stopped: Promise.resolve() };
  const code = await main(argv, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** The error `fn` throws (fails the test if it throws none). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('converge init and create api: command lines', () => {
  it('init defaults to the working directory and a namespaced Greeting', () => {
    expect(parseInit([])).toEqual({
      dir: '.',
      name: undefined,
      ...INIT_DEFAULTS,
      plural: 'greetings',
      clusterScoped: false,
      packages: undefined,
      force: false,
    });
    expect(parseInit(['x', '--kind', 'Policy', '--cluster-scoped'])).toMatchObject({
      dir: 'x',
      kind: 'Policy',
      plural: 'policies',
      clusterScoped: true,
    });
    expect(parseInit(['--help'])).toEqual({ help: true });
    expect(parseCreate(['api', '--group', 'a.b', '--version', 'v1', '--kind', 'Box'])).toEqual({
      dir: '.',
      group: 'a.b',
      version: 'v1',
      kind: 'Box',
      plural: 'boxes',
      clusterScoped: false,
    });
  });

  const bad: [argv: string[], message: string][] = [
    [['init', 'a', 'b'], 'converge init: takes one folder, got also "b" (options come as --flag VALUE)'],
    [['init', '--group', 'example'], 'converge init: --group must be a DNS subdomain with at least one dot'],
    [['init', '--group', 'Web.Example.com'], 'converge init: --group must be a DNS subdomain'],
    [['init', '--version', '1'], 'converge init: --version must be a Kubernetes API version'],
    [['init', '--version', 'v1beta'], 'converge init: --version must be a Kubernetes API version'],
    [['init', '--kind', 'guestbook'], 'converge init: --kind must be PascalCase'],
    [['init', '--kind', 'Guest-Book'], 'converge init: --kind must be PascalCase'],
    [['init', '--plural', 'Guestbooks'], 'converge init: --plural must be lower-case'],
    [['init', '--name', 'My_Operator'], 'converge init: --name must be a DNS label'],
    [['init', '--name', 'a'.repeat(41)], 'converge init: --name must be a DNS label of at most 40'],
    [['init', '--force=yes'], 'converge init: --force takes no value, got "yes"'],
    [['init', '--kind'], 'converge init: --kind needs a value'],
    [['init', '--bogus'], 'converge init: unknown option --bogus'],
    [['create'], 'converge create: what to create is missing: converge create api …'],
    [['create', 'webhook'], 'converge create: can create api, not "webhook"'],
    [['create', 'api', '--version', 'v1', '--kind', 'A'], 'converge create: --group is required'],
    [['create', 'api', '--group', 'a.b', '--kind', 'A'], 'converge create: --version is required'],
    [['create', 'api', '--group', 'a.b', '--version', 'v1'], 'converge create: --kind is required'],
    [
      ['create', 'api', '--group', 'a.b', '--version', 'v1', '--kind', 'a'],
      'converge create: --kind must be',
    ],
    [['create', 'api', '--name', 'x'], 'converge create: unknown option --name'],
  ];
  it.each(bad)('%j is a usage error (exit 2, one line, then the usage)', async (argv, message) => {
    const { code, out, err } = await run(...argv);
    expect(code).toBe(2);
    expect(out).toBe('');
    const [first, , usage] = err.split('\n');
    expect(first?.startsWith(message), first).toBe(true);
    expect(usage).toMatch(new RegExp(`^Usage: converge ${argv[0]} `));
  });

  it('help lists init and create, and each has its own', async () => {
    expect((await run('help')).out).toMatch(/^ {2}init \[dir\] .*\n {2}create api …/m);
    expect((await run('init', '--help')).out).toMatch(/^Usage: converge init \[DIR\]/);
    expect((await run('help', 'create')).out).toMatch(/^Usage: converge create api --group/);
  });

  it('a name the flags accept makes a CRD defineKind and crdsOf accept; one they refuse is a one-line usage error', () => {
    const text = fc.oneof(
      fc.string({ maxLength: 70 }),
      fc.stringMatching(/^[A-Za-z][A-Za-z0-9.-]{0,20}$/),
      fc.stringMatching(/^v[0-9]{1,2}((alpha|beta)[0-9]{0,2})?$/),
    );
    // Mostly names Kubernetes allows (so both branches run often), the rest anything.
    const mostly = (valid: fc.Arbitrary<string>) =>
      fc.oneof({ arbitrary: valid, weight: 3 }, { arbitrary: text, weight: 1 });
    const group = mostly(fc.stringMatching(/^[a-z][a-z0-9]{0,8}(\.[a-z][a-z0-9]{0,8}){1,3}$/));
    const version = mostly(fc.stringMatching(/^v[1-9][0-9]{0,2}((alpha|beta)[1-9][0-9]?)?$/));
    const kind = mostly(fc.stringMatching(/^[A-Z][A-Za-z0-9]{0,30}$/));
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(group, version, kind, fc.boolean(), (group, version, kind, clusterScoped) => {
        const argv = ['--group', group, '--version', version, '--kind', kind];
        if (clusterScoped) argv.push('--cluster-scoped');
        let parsed: ReturnType<typeof parseInit>;
        try {
          parsed = parseInit(argv);
        } catch (error) {
          expect(error).toBeInstanceOf(UsageError);
          expect((error as UsageError).message).not.toMatch(/[\n\r\u2028\u2029]/);
          expect((error as UsageError).message).toMatch(/^converge init: --(group|version|kind|plural) /);
          refused++;
          return;
        }
        if ('help' in parsed) throw new Error('no help was asked for');
        const kindValue = defineKind({
          group: parsed.group,
          version: parsed.version,
          kind: parsed.kind,
          plural: parsed.plural,
          scope: parsed.clusterScoped ? 'Cluster' : 'Namespaced',
          spec: Type.Object({ message: Type.String() }),
        });
        const [crd] = crdsOf([kindValue]);
        expect(crd?.metadata.name).toBe(`${parsed.plural}.${parsed.group}`);
        accepted++;
      }),
      { numRuns: 300 },
    );
    expect(accepted).toBeGreaterThan(10);
    expect(refused).toBeGreaterThan(10);
  });

  it('names of files and identifiers follow the kind', () => {
    expect(kindNames({ group: 'a.b', version: 'v1', kind: 'CronTab' })).toMatchObject({
      file: 'cron-tab',
      camel: 'cronTab',
      plural: 'crontabs',
    });
    expect(kindNames({ group: 'a.b', version: 'v1', kind: 'HTTPRoute' })).toMatchObject({
      file: 'http-route',
      camel: 'httpRoute',
    });
    expect(kindNames({ group: 'a.b', version: 'v1', kind: 'V2Thing' })).toMatchObject({ camel: 'v2Thing' });
  });
});

describe('converge init', () => {
  const args = (dir: string, extra: Partial<Parameters<typeof initProject>[0]> = {}) => ({
    dir,
    name: undefined,
    ...INIT_DEFAULTS,
    plural: 'greetings',
    clusterScoped: false,
    packages: undefined,
    force: false,
    ...extra,
  });

  it('writes the project, named after its folder, depending on this CLI version', async () => {
    const dir = fresh('My Operator');
    const { code, out } = await run('init', dir, '--kind', 'CronTab');
    expect(code).toBe(0);
    expect(out).toContain(`converge: created my-operator in ${dir}`);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    expect(manifest.name).toBe('my-operator');
    expect(manifest.type).toBe('module');
    expect(manifest.engines).toEqual({ node: '>=22.18' });
    expect(manifest.scripts).toMatchObject({
      pretest: 'converge --version',
      test: expect.stringMatching(/^tsc --noEmit && node --test /),
      dev: 'converge dev',
      manifests: 'converge manifests',
      start: 'converge run src/operator.ts',
    });
    const version = cliVersion();
    expect(manifest.dependencies).toEqual({
      '@converge/apiserver': `^${version}`,
      '@converge/cli': `^${version}`,
      '@converge/kube': `^${version}`,
      '@converge/runtime': `^${version}`,
    });
    const operator = readFileSync(join(dir, 'src/operator.ts'), 'utf8');
    expect(operator).toContain(CONTROLLERS_MARKER);
    expect(operator).toContain("import { cronTabController } from './controllers/cron-tab.ts';");
    expect(readFileSync(join(dir, 'src/kinds/cron-tab.ts'), 'utf8')).toContain("kind: 'CronTab'");
    expect(readFileSync(join(dir, 'test/cron-tab.test.ts'), 'utf8')).toContain("from 'node:test'");
    const tsconfig = JSON.parse(readFileSync(join(dir, 'tsconfig.json'), 'utf8'));
    expect(tsconfig.compilerOptions).toMatchObject({
      module: 'nodenext',
      strict: true,
      noEmit: true,
      allowImportingTsExtensions: true,
      erasableSyntaxOnly: true,
    });
  });

  it('checks TypeScript and @types/node at the versions the repository builds with', () => {
    const root = JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8'));
    expect(DEV_DEPENDENCIES).toEqual({
      '@types/node': root.devDependencies['@types/node'],
      // The native compiler the repository builds with (scripts/tsc.ts), not the TypeScript 6 its
      // ESLint and compiler-API tests need.
      typescript: root.devDependencies['typescript-native'].replace(/^npm:typescript@/, ''),
    });
    const cli = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(cliVersion()).toBe(cli.version);
  });

  it('refuses a folder that is not empty, writing nothing; --force writes into it', async () => {
    const dir = fresh();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    const error = thrown(() => initProject(args(dir)));
    expect(error).toBeInstanceOf(ScaffoldError);
    expect(error).toMatchObject({ code: ScaffoldErrorCodes.DIR_NOT_EMPTY, path: dir });
    const { code, err } = await run('init', dir);
    expect(code).toBe(1);
    expect(err).toMatch(/is not empty.*CONVERGE_ERR_CLI_SCAFFOLD_DIR_NOT_EMPTY/);
    expect(() => readFileSync(join(dir, 'package.json'))).toThrow();
    const made = initProject(args(dir, { force: true }));
    expect(made.files).toContain('package.json');
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('mine');
  });

  it('a folder holding only .git counts as empty', () => {
    const dir = fresh();
    mkdirSync(join(dir, '.git'), { recursive: true });
    expect(initProject(args(dir)).name).toBe('my-operator');
  });

  it('a folder name without letters or digits needs --name', () => {
    const error = thrown(() => initProject(args(fresh('___'))));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).problem).toMatch(/give --name/);
    expect(initProject(args(fresh('___'), { name: 'named' })).name).toBe('named');
  });

  it('--packages depends on every tarball of the folder: relative inside the project, else absolute', () => {
    const packs = join(work, `${folders++}`, 'packs');
    mkdirSync(packs, { recursive: true });
    for (const p of ['runtime', 'kube', 'apiserver', 'cli', 'store'])
      writeFileSync(join(packs, `converge-${p}-0.1.0.tgz`), '');
    writeFileSync(join(packs, 'create-converge-0.1.0.tgz'), '');
    const outside = initProject(args(fresh(), { packages: packs }));
    const deps = JSON.parse(readFileSync(join(outside.dir, 'package.json'), 'utf8')).dependencies;
    expect(Object.keys(deps).sort()).toEqual(
      [
        '@converge/apiserver',
        '@converge/cli',
        '@converge/kube',
        '@converge/runtime',
        '@converge/store',
      ].sort(),
    );
    expect(deps['@converge/store']).toBe(`file:${join(packs, 'converge-store-0.1.0.tgz')}`);

    const project = fresh();
    mkdirSync(join(project, 'vendor'), { recursive: true });
    for (const p of ['runtime', 'kube', 'apiserver', 'cli'])
      writeFileSync(join(project, 'vendor', `converge-${p}-0.1.0.tgz`), '');
    initProject(args(project, { packages: join(project, 'vendor'), force: true }));
    const inside = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')).dependencies;
    expect(inside['@converge/cli']).toBe('file:./vendor/converge-cli-0.1.0.tgz');
  });

  it('--packages without the tarballs, or unreadable, is a ScaffoldError before anything is written', () => {
    const empty = join(work, `${folders++}`, 'empty');
    mkdirSync(empty, { recursive: true });
    writeFileSync(join(empty, 'converge-runtime-0.1.0.tgz'), '');
    const dir = fresh();
    for (const packages of [empty, join(work, 'missing')]) {
      const error = thrown(() => initProject(args(dir, { packages })));
      expect(error).toMatchObject({ code: ScaffoldErrorCodes.PACKAGES_NOT_FOUND, path: packages });
    }
    expect(() => readFileSync(join(dir, 'package.json'))).toThrow();
  });
});

describe('converge create api', () => {
  const api = (dir: string, kind: string, clusterScoped = false) => ({
    dir,
    group: 'webapp.example.com',
    version: 'v1',
    kind,
    plural: kindNames({ group: '', version: '', kind }).plural,
    clusterScoped,
  });

  it('adds the kind, its controller and test, and wires it above the markers', async () => {
    const dir = fresh();
    initProject({
      dir,
      name: undefined,
      ...INIT_DEFAULTS,
      plural: 'greetings',
      clusterScoped: false,
      packages: undefined,
      force: false,
    });
    const { code, out } = await run(
      'create',
      'api',
      '--dir',
      dir,
      '--group',
      'webapp.example.com',
      '--version',
      'v1',
      '--kind',
      'Policy',
      '--cluster-scoped',
    );
    expect(code).toBe(0);
    expect(out).toContain('converge: added Policy (webapp.example.com/v1)');
    const operator = readFileSync(join(dir, 'src/operator.ts'), 'utf8');
    const lines = operator.split('\n').map((l) => l.trim());
    expect(lines.indexOf("import { policyController } from './controllers/policy.ts';")).toBe(
      lines.indexOf(IMPORTS_MARKER) - 1,
    );
    expect(lines.indexOf('policyController(manager);')).toBe(lines.indexOf(CONTROLLERS_MARKER) - 1);
    expect(lines.indexOf('greetingController(manager);')).toBeLessThan(
      lines.indexOf('policyController(manager);'),
    );
    const kind = readFileSync(join(dir, 'src/kinds/policy.ts'), 'utf8');
    expect(kind).toContain("scope: 'Cluster'");
    expect(kind).toContain("plural: 'policies'");

    const again = thrown(() => createApi(api(dir, 'Policy')));
    expect(again).toMatchObject({ code: ScaffoldErrorCodes.KIND_EXISTS });
    const { code: exit, err } = await run(
      'create',
      'api',
      '--dir',
      dir,
      '--group',
      'webapp.example.com',
      '--version',
      'v1',
      '--kind',
      'Policy',
    );
    expect(exit).toBe(1);
    expect(err).toContain('CONVERGE_ERR_CLI_SCAFFOLD_KIND_EXISTS');
  });

  it('a module without the controllers marker is refused, and nothing is written', () => {
    const dir = fresh();
    mkdirSync(join(dir, 'src'), { recursive: true });
    writeFileSync(join(dir, 'package.json'), '{"name":"x"}');
    writeFileSync(join(dir, 'src/operator.ts'), 'export default function operator(): void {}\n');
    const error = thrown(() => createApi(api(dir, 'Box')));
    expect(error).toMatchObject({ code: ScaffoldErrorCodes.MARKER_MISSING });
    expect(() => readFileSync(join(dir, 'src/kinds/box.ts'))).toThrow();
  });

  it('a folder that is no project is refused', () => {
    const dir = fresh();
    mkdirSync(dir, { recursive: true });
    expect(thrown(() => createApi(api(dir, 'Box')))).toMatchObject({
      code: ScaffoldErrorCodes.NOT_A_PROJECT,
    });
    writeFileSync(join(dir, 'package.json'), '{"converge":{"module":"operator.ts"}}');
    writeFileSync(join(dir, 'operator.ts'), `${CONTROLLERS_MARKER}\n`);
    expect(thrown(() => createApi(api(dir, 'Box')))).toMatchObject({
      code: ScaffoldErrorCodes.NOT_A_PROJECT,
    });
    writeFileSync(join(dir, 'package.json'), '{');
    expect(thrown(() => createApi(api(dir, 'Box')))).toMatchObject({
      code: ScaffoldErrorCodes.NOT_A_PROJECT,
    });
  });

  it('wiring without the imports marker puts the import after the last import line, and keeps the indent', () => {
    const source = [
      "import type { Manager } from '@converge/runtime';",
      "import { a } from './controllers/a.ts';",
      '',
      'export default function operator(manager: Manager): void {',
      '    a(manager);',
      `    ${CONTROLLERS_MARKER}`,
      '}',
    ].join('\n');
    const wired = wireController(
      source,
      kindNames({ group: 'a.b', version: 'v1', kind: 'Box' }),
      'op.ts',
      './',
    );
    expect(wired.split('\n')).toEqual([
      "import type { Manager } from '@converge/runtime';",
      "import { a } from './controllers/a.ts';",
      "import { boxController } from './controllers/box.ts';",
      '',
      'export default function operator(manager: Manager): void {',
      '    a(manager);',
      '    boxController(manager);',
      `    ${CONTROLLERS_MARKER}`,
      '}',
    ]);
  });
});
