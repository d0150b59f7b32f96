import { readFileSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { KubeconfigError, KubeconfigNotFoundError } from '../errors.ts';
import {
  type KubeconfigFile,
  type Named,
  parseKubeconfig,
  type RawCluster,
  type RawContext,
  type RawUser,
} from './kubeconfig-file.ts';

/** Environment variables the loaders read. */
export type Environment = Readonly<Record<string, string | undefined>>;

/** Several kubeconfig files merged as kubectl merges them. */
export interface MergedKubeconfig {
  /** The files that were read, in order. */
  readonly files: readonly string[];
  readonly clusters: ReadonlyMap<string, Named<RawCluster>>;
  readonly users: ReadonlyMap<string, Named<RawUser>>;
  readonly contexts: ReadonlyMap<string, Named<RawContext>>;
  /** The first `current-context` set, and the file that set it. */
  readonly currentContext?: { readonly name: string; readonly file: string };
}

/**
 * The kubeconfig files to read, as kubectl picks them: `path` if given; else every file of
 * `KUBECONFIG` (split on the platform's path delimiter, empty entries and duplicates dropped);
 * else `~/.kube/config`. Relative paths resolve against `cwd`.
 *
 * @example
 * kubeconfigPaths(undefined, { KUBECONFIG: 'a:b' }, '/work'); // ['/work/a', '/work/b']
 */
export function kubeconfigPaths(path: string | undefined, env: Environment, cwd: string): string[] {
  if (path !== undefined) return [resolve(cwd, path)];
  const list = env.KUBECONFIG;
  if (list !== undefined && list.trim() !== '') {
    const files = list
      .split(delimiter)
      .filter((f) => f.trim() !== '')
      .map((f) => resolve(cwd, f));
    return [...new Set(files)];
  }
  const home = env.HOME ?? env.USERPROFILE;
  return home === undefined || home === '' ? [] : [join(home, '.kube', 'config')];
}

/** Reads a file; undefined when it does not exist; a KubeconfigError when it cannot be read. */
function readOptional(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new KubeconfigError(file, '(file)', `cannot be read: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/**
 * Reads and parses the kubeconfig files. Files of a KUBECONFIG list that do not exist are skipped
 * (kubectl skips them); an explicit `path` that does not exist, or no existing file at all, is a
 * {@link KubeconfigNotFoundError}.
 *
 * @example
 * const files = readKubeconfigFiles(['/home/me/.kube/config'], false);
 */
export function readKubeconfigFiles(paths: readonly string[], explicit: boolean): KubeconfigFile[] {
  const parsed: KubeconfigFile[] = [];
  for (const file of paths) {
    const text = readOptional(file);
    if (text === undefined) {
      if (explicit) throw new KubeconfigNotFoundError([file]);
      continue;
    }
    parsed.push(parseKubeconfig(text, file));
  }
  if (parsed.length === 0) throw new KubeconfigNotFoundError(paths);
  return parsed;
}

function firstWins<T>(target: Map<string, Named<T>>, entries: readonly Named<T>[]): void {
  for (const entry of entries) if (!target.has(entry.name)) target.set(entry.name, entry);
}

/**
 * Merges kubeconfig files as kubectl does: for clusters, users and contexts the first file that
 * defines a name wins (later files never override it); `current-context` comes from the first file
 * that sets one.
 *
 * @example
 * const merged = mergeKubeconfigs([parseKubeconfig(a, 'a'), parseKubeconfig(b, 'b')]);
 */
export function mergeKubeconfigs(files: readonly KubeconfigFile[]): MergedKubeconfig {
  const clusters = new Map<string, Named<RawCluster>>();
  const users = new Map<string, Named<RawUser>>();
  const contexts = new Map<string, Named<RawContext>>();
  let currentContext: { name: string; file: string } | undefined;
  for (const file of files) {
    firstWins(clusters, file.clusters);
    firstWins(users, file.users);
    firstWins(contexts, file.contexts);
    if (currentContext === undefined && file.currentContext !== undefined) {
      currentContext = { name: file.currentContext, file: file.file };
    }
  }
  return {
    files: files.map((f) => f.file),
    clusters,
    users,
    contexts,
    ...(currentContext === undefined ? {} : { currentContext }),
  };
}
