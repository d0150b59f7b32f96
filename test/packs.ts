/**
 * One packed set of tarballs per test run, shared by every test that installs them (the
 * distribution and scaffold tests). Packing builds every package's dist/ and tars it: done once,
 * the second test installs the same files the first did instead of packing them again.
 *
 * `test/global-setup.ts` provides an empty folder for the run (`inject('convergePacks')`); the
 * first test to ask packs into it while the others wait for its `done` marker, in whatever worker
 * process they run. A file run under a config without that setup packs into a folder of its own.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { COMMAND_MS, run } from './distribution/project.ts';
import { onceAcrossProcesses } from './once.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** An empty folder for this run's tarballs (test/global-setup.ts). */
    convergePacks: string;
  }
}

const repo = fileURLToPath(new URL('..', import.meta.url));
/**
 * The folder holding this run's tarballs (`converge-<pkg>-<version>.tgz`, `create-converge-…`),
 * packed by `npm run pack` on `env`'s Node the first time any test asks. Never delete or change
 * them: other tests install the same files.
 */
export async function sharedPacks(env: NodeJS.ProcessEnv): Promise<string> {
  const shared = inject('convergePacks') as string | undefined;
  const dir = shared ?? mkdtempSync(join(tmpdir(), 'converge-packs-'));
  const tarballs = join(dir, 'tarballs');
  const done = join(dir, 'done');
  await onceAcrossProcesses(
    join(dir, 'packing'),
    () => existsSync(done),
    async () => {
      await run('npm', ['run', '--silent', 'pack', '--', '--out', tarballs], { cwd: repo, env });
      writeFileSync(done, '');
    },
    COMMAND_MS,
  );
  return tarballs;
}
