/**
 * `converge init`: a new operator project in an empty folder — package.json, tsconfig, the
 * operator module, one kind with its controller and test, README, .gitignore. The Dockerfile and
 * config/ come from `npm run manifests` (it imports the module, so after `npm install`).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { UsageError } from '../errors.ts';
import type { InitArgs } from './args.ts';
import { ScaffoldError, ScaffoldErrorCodes } from './errors.ts';
import { controllerModule, kindModule, testModule } from './kind-templates.ts';
import { checkName, type KindNames, kindNames, nameFromFolder } from './names.ts';
import {
  DIRECT_PACKAGES,
  gitignore,
  operatorModule,
  packageJson,
  readme,
  tsconfigJson,
} from './project-templates.ts';

/** What {@link initProject} made. */
export interface InitResult {
  /** The project folder, absolute. */
  readonly dir: string;
  readonly name: string;
  readonly kind: KindNames;
  /** The files written, relative to `dir`, sorted. */
  readonly files: readonly string[];
}

/** The version of this CLI, which a new project depends on (`^x.y.z` of every `@converge/*` package). */
export function cliVersion(): string {
  const url = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version;
}

/**
 * The `@converge/*` tarballs `npm run pack` wrote to `dir`, by package name, as `file:` specs:
 * relative to the project when they lie inside it (so an image build can copy them), else
 * absolute. Every package found is a dependency, so the CLI's own `@converge/*` dependencies
 * resolve to the tarballs too.
 */
export function tarballDependencies(dir: string, project: string): Record<string, string> {
  let files: string[];
  try {
    files = readdirSync(dir);
  } catch (error) {
    throw new ScaffoldError(ScaffoldErrorCodes.PACKAGES_NOT_FOUND, dir, 'cannot be read (--packages)', {
      cause: error,
    });
  }
  const dependencies: Record<string, string> = {};
  for (const file of files.sort()) {
    const pkg = /^converge-([a-z][a-z0-9-]*?)-\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?\.tgz$/.exec(file)?.[1];
    if (pkg === undefined) continue;
    const path = resolve(dir, file);
    const shown = relative(project, path);
    dependencies[`@converge/${pkg}`] =
      shown.startsWith('..') || isAbsolute(shown) ? `file:${path}` : `file:./${shown}`;
  }
  const missing = DIRECT_PACKAGES.filter((p) => dependencies[`@converge/${p}`] === undefined);
  if (missing.length > 0)
    throw new ScaffoldError(
      ScaffoldErrorCodes.PACKAGES_NOT_FOUND,
      dir,
      `holds no tarball of ${missing.map((p) => `@converge/${p}`).join(', ')} (expected converge-<package>-<version>.tgz from npm run pack -- --out ${dir})`,
    );
  return dependencies;
}

/** Writes `files` (path relative to `dir` → content), making folders; a failure is a {@link ScaffoldError}. */
export function writeFiles(dir: string, files: Readonly<Record<string, string>>): void {
  for (const [path, content] of Object.entries(files)) {
    const target = join(dir, path);
    try {
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, content);
    } catch (error) {
      throw new ScaffoldError(
        ScaffoldErrorCodes.WRITE_FAILED,
        target,
        `cannot be written: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
  }
}

/** Whether `dir` holds anything but what version control leaves in a fresh clone. */
function holdsFiles(dir: string): boolean {
  if (!existsSync(dir)) return false;
  if (!statSync(dir).isDirectory())
    throw new ScaffoldError(ScaffoldErrorCodes.WRITE_FAILED, dir, 'is a file, not a folder');
  return readdirSync(dir).some((entry) => entry !== '.git');
}

/**
 * Makes a new operator project in `args.dir`, depending on Converge `version` (default: this
 * CLI's). Throws a {@link ScaffoldError} when the folder is not empty (unless `force`) or
 * `--packages` holds no tarballs, before writing anything; a {@link UsageError} when no project
 * name can be made from the folder's name.
 */
export function initProject(args: InitArgs, version: string = cliVersion()): InitResult {
  const dir = resolve(args.dir);
  const folderName = nameFromFolder(basename(dir));
  const name = args.name ?? folderName;
  if (name === undefined)
    throw new UsageError(
      'init',
      `no project name can be made from the folder ${JSON.stringify(basename(dir))}; give --name`,
    );
  checkName('init', name);
  if (!args.force && holdsFiles(dir))
    throw new ScaffoldError(
      ScaffoldErrorCodes.DIR_NOT_EMPTY,
      dir,
      'is not empty; init makes a project in an empty folder (--force writes into it, replacing files of the same names)',
    );
  const dependencies =
    args.packages === undefined
      ? Object.fromEntries(DIRECT_PACKAGES.map((p) => [`@converge/${p}`, `^${version}`]))
      : tarballDependencies(resolve(args.packages), dir);
  const kind = kindNames(args);
  const files: Record<string, string> = {
    'package.json': packageJson(name, dependencies),
    'tsconfig.json': tsconfigJson(),
    'README.md': readme(name, kind),
    '.gitignore': gitignore(),
    'src/operator.ts': operatorModule(kind),
    ...kindFiles(kind),
  };
  writeFiles(dir, files);
  return { dir, name, kind, files: Object.keys(files).sort() };
}

/** The three files of one kind, by path. */
export function kindFiles(kind: KindNames): Record<string, string> {
  return {
    [`src/kinds/${kind.file}.ts`]: kindModule(kind),
    [`src/controllers/${kind.file}.ts`]: controllerModule(kind),
    [`test/${kind.file}.test.ts`]: testModule(kind),
  };
}
