/**
 * `converge manifests`: wires operator modules into a manager that never starts (over a backend
 * that refuses every call, so nothing is contacted), generates the deploy artefacts from what the
 * wiring recorded ({@link generateManifests}), and writes them — or, with `--check`, compares them
 * with the files on disk and exits 1 listing the ones that differ.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import {
  configFiles,
  GENERATED_HEADER,
  generateManifests,
  helmChart,
  type ManifestSet,
} from '@converge/kube';
import { type Backend, Manager } from '@converge/runtime';
import { OperatorModuleError, quote, UsageError } from './errors.ts';
import type { ManifestsArgs } from './manifests-args.ts';
import { wireModule } from './operator-module.ts';
import type { RunIo } from './process-io.ts';

/** The project's package.json, as far as manifests care. */
interface PackageJson {
  readonly name?: unknown;
  readonly version?: unknown;
  readonly converge?: { readonly module?: unknown };
  readonly dependencies?: unknown;
  readonly optionalDependencies?: unknown;
}

/**
 * The `file:` dependencies `npm ci --omit=dev` installs from inside the project (the tarballs
 * `converge init --packages` points at), as paths for the Dockerfile to copy before it; and, as
 * `outside`, those outside the project, which the image's build context cannot hold.
 */
export function localPackagesOf(
  pkg: PackageJson,
  cwd: string,
): { readonly paths: string[]; readonly outside: { name: string; spec: string }[] } {
  const paths: string[] = [];
  const outside: { name: string; spec: string }[] = [];
  for (const deps of [pkg.dependencies, pkg.optionalDependencies]) {
    if (typeof deps !== 'object' || deps === null) continue;
    for (const [name, spec] of Object.entries(deps)) {
      if (typeof spec !== 'string' || !spec.startsWith('file:')) continue;
      const path = relative(cwd, resolve(cwd, spec.slice('file:'.length)));
      if (path === '' || path.startsWith('..') || isAbsolute(path)) outside.push({ name, spec });
      else paths.push(path.split(sep).join('/'));
    }
  }
  return { paths, outside };
}

/**
 * A backend that refuses everything: `converge manifests` wires modules only to read their
 * permissions. A module that calls the API while wiring gets this error, naming the call.
 */
export function inertBackend(): Backend {
  const refuse = (verb: string) => (): Promise<never> =>
    Promise.reject(
      new Error(
        `converge manifests wires operator modules without an API server; the module called ${verb}()`,
      ),
    );
  return {
    name: 'converge-manifests (no API server)',
    get: refuse('get'),
    list: refuse('list'),
    watch: refuse('watch'),
    create: refuse('create'),
    update: refuse('update'),
    updateStatus: refuse('updateStatus'),
    patch: refuse('patch'),
    delete: refuse('delete'),
  } as unknown as Backend;
}

/** The operator's name from a package name: `@acme/website-operator` → `website-operator`. */
export function nameFromPackage(name: string): string | undefined {
  const bare = name
    .replace(/^@[^/]+\//, '')
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-');
  const trimmed = bare
    .replace(/^[^a-z]+/, '')
    .replace(/-+$/, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return trimmed === '' ? undefined : trimmed;
}

async function readPackageJson(dir: string): Promise<PackageJson> {
  const path = join(dir, 'package.json');
  if (!existsSync(path)) return {};
  try {
    return JSON.parse(await readFile(path, 'utf8')) as PackageJson;
  } catch (error) {
    throw new UsageError('manifests', `${path} is not JSON: ${(error as Error).message}`);
  }
}

/** Where an operator module is looked for when none is given nor configured, in this order. */
export const DEFAULT_MODULES = ['src/operator.ts', 'operator.ts'] as const;

/**
 * The operator modules: those given, else package.json's `converge.module` (a path or a list),
 * else the first of {@link DEFAULT_MODULES} that exists (`converge init` writes `src/operator.ts`,
 * the README's first operator is `operator.ts`). When none exists, an {@link OperatorModuleError}
 * says where it looked and how to name the module.
 */
export async function operatorModules(
  given: readonly string[],
  cwd: string = process.cwd(),
): Promise<readonly string[]> {
  if (given.length > 0) return given;
  const configured = (await readPackageJson(cwd)).converge?.module;
  if (typeof configured === 'string') return [configured];
  if (Array.isArray(configured) && configured.length > 0 && configured.every((m) => typeof m === 'string'))
    return configured as string[];
  const found = DEFAULT_MODULES.find((m) => existsSync(join(cwd, m)));
  if (found !== undefined) return [found];
  throw new OperatorModuleError(
    DEFAULT_MODULES[0],
    `does not exist, nor does ${DEFAULT_MODULES.slice(1).join(', ')} (in ${cwd}): give the module's path ` +
      '(converge manifests path/to/operator.ts) or name it in package.json ("converge": { "module": "path/to/operator.ts" })',
  );
}

/** What the project's modules and options generate, by path relative to `cwd`. */
export async function generatedFiles(
  args: ManifestsArgs,
  cwd: string,
): Promise<{
  files: Map<string, string>;
  set: ManifestSet;
  modules: readonly string[];
  warnings: readonly string[];
}> {
  const pkg = await readPackageJson(cwd);
  const modules = await operatorModules(args.modules, cwd);
  const inImage = modules.map((module) => {
    const path = relative(cwd, resolve(cwd, module));
    if (path.startsWith('..') || isAbsolute(path))
      throw new UsageError(
        'manifests',
        `module ${quote(module)} lies outside ${cwd}: the image holds the project folder only`,
      );
    return path.split(sep).join('/');
  });
  const name =
    args.name ??
    (typeof pkg.name === 'string' ? nameFromPackage(pkg.name) : undefined) ??
    nameFromPackage(basename(cwd));
  if (name === undefined)
    throw new UsageError('manifests', 'no operator name: give --name NAME or a "name" in package.json');
  const manager = new Manager({ backend: inertBackend() });
  for (const module of modules) await wireModule(resolve(cwd, module), manager);
  const local = localPackagesOf(pkg, cwd);
  const set = generateManifests(manager, {
    name,
    modules: inImage,
    leaderElection: args.leaderElection,
    fencingPolicy: args.fencingPolicy,
    ...(args.shardGroup === undefined ? {} : { shardGroup: args.shardGroup }),
    ...(args.shardBy === undefined ? {} : { shardBy: args.shardBy }),
    ...(args.replicas === undefined ? {} : { replicas: args.replicas }),
    localPackages: local.paths,
    ...(args.namespace === undefined ? {} : { namespace: args.namespace }),
    image: args.image ?? defaultImage(name, pkg.version),
  });
  const files = new Map<string, string>();
  const out = relative(cwd, resolve(cwd, args.out)) || '.';
  for (const [path, text] of configFiles(set)) files.set(join(out, path), text);
  if (args.helm) for (const [path, text] of helmChart(set)) files.set(join('chart', path), text);
  return { files, set, modules, warnings: outsideWarning(local.outside) };
}

/**
 * The image when `--image` is not given: `NAME:VERSION` from package.json (`my-operator:0.1.0`,
 * the tag deploy.md builds), since a `latest` tag makes Kubernetes pull on every start
 * (`imagePullPolicy: Always`); `NAME:latest` only when there is no version a tag can carry.
 */
export function defaultImage(name: string, version: unknown): string {
  return typeof version === 'string' && /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(version)
    ? `${name}:${version}`
    : `${name}:latest`;
}

/** One warning for every `file:` dependency outside the project (a project made with --packages has 8). */
function outsideWarning(outside: readonly { name: string; spec: string }[]): string[] {
  if (outside.length === 0) return [];
  const listed = outside.map((d) => `${d.name} (${quote(d.spec)})`).join(', ');
  return [
    `${outside.length === 1 ? 'a dependency is a file: path' : `${outside.length} dependencies are file: paths`} outside the project, which the Dockerfile's build cannot copy: ${listed}; move ${outside.length === 1 ? 'it' : 'them'} into the project (e.g. vendor/, npm install ./vendor/*.tgz) and run converge manifests --force`,
  ];
}

/** Generated files (they start with the header) under `dir` that `keep` does not hold: left over. */
async function staleFiles(cwd: string, dir: string, keep: ReadonlyMap<string, string>): Promise<string[]> {
  const root = resolve(cwd, dir);
  if (!existsSync(root)) return [];
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  const stale: string[] = [];
  for (const entry of entries) {
    if (!entry.isFile() || !entry.name.endsWith('.yaml')) continue;
    const path = relative(cwd, join(entry.parentPath, entry.name));
    if (keep.has(path)) continue;
    const text = await readFile(join(cwd, path), 'utf8');
    if (text.startsWith(GENERATED_HEADER)) stale.push(path);
  }
  return stale.sort();
}

/** A path relative to `cwd` as shown: relative when below it, else absolute. */
function shown(cwd: string, path: string): string {
  return path.startsWith('..') ? resolve(cwd, path) : path;
}

/** Runs `converge manifests`; returns the exit code. */
export async function runManifests(
  args: ManifestsArgs,
  io: RunIo,
  cwd: string = process.cwd(),
): Promise<number> {
  const { files, set, modules, warnings } = await generatedFiles(args, cwd);
  const changed: string[] = [];
  for (const [path, text] of files) {
    const full = join(cwd, path);
    const current = existsSync(full) ? await readFile(full, 'utf8') : undefined;
    if (current !== text) changed.push(path);
  }
  const stale = [
    ...(await staleFiles(cwd, resolve(cwd, args.out), files)),
    ...(args.helm ? await staleFiles(cwd, 'chart', files) : []),
  ];
  if (args.check) {
    for (const path of changed) io.err(`converge manifests: out of date: ${shown(cwd, path)}`);
    for (const path of stale) io.err(`converge manifests: no longer generated: ${shown(cwd, path)}`);
    const drifted = changed.length + stale.length;
    if (drifted > 0) {
      io.err(
        `converge manifests: ${drifted} file${drifted === 1 ? '' : 's'} differ from what ${modules.join(', ')} generate${modules.length === 1 ? 's' : ''}; run converge manifests and commit the result`,
      );
      return 1;
    }
    io.out(`converge manifests: ${files.size} files up to date`);
    return 0;
  }
  for (const path of changed) {
    await mkdir(dirname(join(cwd, path)), { recursive: true });
    await writeFile(join(cwd, path), files.get(path) as string);
    io.out(`converge manifests: wrote ${shown(cwd, path)}`);
  }
  for (const path of stale) {
    await rm(join(cwd, path));
    io.out(`converge manifests: removed ${shown(cwd, path)} (no longer generated)`);
  }
  for (const [file, text] of [
    ['Dockerfile', set.dockerfile],
    ['.dockerignore', set.dockerignore],
  ] as const) {
    if (existsSync(join(cwd, file)) && !args.force) continue;
    await writeFile(join(cwd, file), text);
    io.out(`converge manifests: wrote ${file}`);
    if (file === 'Dockerfile')
      for (const warning of warnings) io.err(`converge manifests: warning: ${warning}`);
  }
  const o = set.options;
  const sharded = o.shardGroup === undefined ? '' : `, ${o.replicas} replicas in shard group ${o.shardGroup}`;
  io.out(
    `converge manifests: ${files.size} files (${changed.length} changed) for ${o.name} in namespace ${o.namespace}, image ${o.image}${sharded}; apply with kubectl apply -k ${args.out}`,
  );
  return 0;
}
