/**
 * `npm run pack [-- --out DIR]`: packs every workspace package into DIR (default `.packs/`, emptied
 * first) — each package's `prepack` builds its dist/ — and prints the `npm install` line that adds
 * them all to another project (all but create-converge, which makes a project rather than being a
 * dependency of one). Until Converge is on the npm registry this is how a project outside
 * the repository depends on it (README, "Install").
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = fileURLToPath(new URL('..', import.meta.url));
let out: string;
try {
  const { values } = parseArgs({ options: { out: { type: 'string' } }, strict: true });
  out = resolve(values.out ?? join(root, '.packs'));
} catch (error) {
  process.stderr.write(`pack: ${(error as Error).message}\nUsage: npm run pack [-- --out DIR]\n`);
  process.exit(2);
}

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
execFileSync('npm', ['pack', '--workspaces', '--pack-destination', out, '--silent'], {
  cwd: root,
  stdio: ['ignore', 'ignore', 'inherit'],
});
const tarballs = readdirSync(out)
  .filter((f) => f.endsWith('.tgz'))
  .sort()
  .map((f) => join(out, f));
// create-converge is no dependency of a project: it makes one (what `npm create converge` runs).
const installed = tarballs.filter((t) => !/create-converge-[^/]*$/.test(t));
const packages = tarballs.map((t) => `--package=${t}`).join(' ');
process.stdout.write(
  `${tarballs.join('\n')}\n\nIn your project:\n  npm install ${installed.join(' ')}\n\n` +
    `A new project depending on them (npm create converge DIR, with unreleased Converge):\n` +
    `  npm exec ${packages} -- create-converge DIR --packages ${out}\n`,
);
