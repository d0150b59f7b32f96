/**
 * `npm run pack [-- --out DIR]`: packs every workspace package into DIR (default `.packs/`, emptied
 * first) — each package's `prepack` builds its dist/ — and prints the `npm install` line that adds
 * them all to another project (all but create-converge, which makes a project rather than being a
 * dependency of one). Until Converge is on the npm registry this is how a project outside
 * the repository depends on it (README, "Install").
 *
 * The packages' dist/ are built first by one `tsc -b` over all of them, so that each prepack's own
 * `tsc -b` finds its package up to date: one TypeScript process parses the shared declarations
 * (lib, @types/node, the packages each one references) once, where a build per package parsed
 * them again in every process (~17 % of the CPU of a build from scratch).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { alive } from './alive.ts';
import { TSC } from './tsc.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
let out: string;
try {
  const { values } = parseArgs({ options: { out: { type: 'string' } }, strict: true });
  out = resolve(values.out ?? join(root, '.packs'));
} catch (error) {
  process.stderr.write(`pack: ${(error as Error).message}\nUsage: npm run pack [-- --out DIR]\n`);
  process.exit(2);
}

/**
 * Packing builds every package's dist/ in place (prepack), so two packs at once (the distribution
 * and scaffold tests run in parallel) could tar a dist/ the other is rewriting: one pack at a time,
 * behind a lock directory holding the packer's pid (a lock whose process is gone is taken over).
 */
const LOCK = join(root, 'node_modules', '.cache', 'converge-pack.lock');
const LOCK_WAIT_MS = 600_000;

async function lock(): Promise<void> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  mkdirSync(join(LOCK, '..'), { recursive: true });
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), `${process.pid}\n`);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let holder = Number.NaN;
    try {
      holder = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
    } catch {
      // Just made, its pid not yet written: wait.
    }
    if (Number.isInteger(holder) && !alive(holder)) rmSync(LOCK, { recursive: true, force: true });
    else if (Date.now() > deadline)
      throw new Error(`pack: ${LOCK} held by pid ${holder} for ${LOCK_WAIT_MS} ms`);
    else await sleep(200);
  }
}

/** The workspace packages whose prepack builds dist/ with `tsc -b` (scripts/prepack.ts). */
function builtPackages(): string[] {
  const packages = join(root, 'packages');
  return readdirSync(packages).filter((name) => {
    const file = join(packages, name, 'package.json');
    if (!existsSync(file)) return false;
    const manifest = JSON.parse(readFileSync(file, 'utf8')) as { scripts?: Record<string, string> };
    return manifest.scripts?.prepack?.includes('scripts/prepack.ts') === true;
  });
}

await lock();
try {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  execFileSync(process.execPath, [TSC, '-b', ...builtPackages().map((name) => join('packages', name))], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  execFileSync('npm', ['pack', '--workspaces', '--pack-destination', out, '--silent'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
} finally {
  rmSync(LOCK, { recursive: true, force: true });
}
const tarballs = readdirSync(out)
  .filter((f) => f.endsWith('.tgz'))
  .sort()
  .map((f) => join(out, f));
// create-converge is no dependency of a project: it makes one (what `npm create converge` runs).
const installed = tarballs.filter((t) => !/create-converge-[^/]*$/.test(t));
const creator = tarballs.find((t) => /create-converge-[^/]*$/.test(t));
process.stdout.write(
  `${tarballs.join('\n')}\n\nIn your project:\n  npm install ${installed.join(' ')}\n\n` +
    `A new project depending on them (npm create converge DIR, with unreleased Converge):\n` +
    `  npm exec --yes --package=${creator} -- create-converge DIR --packages ${out}\n`,
);
