/**
 * The `prepack` of `create-converge`: bundles `converge init` (packages/cli/src/create.ts and the
 * scaffolding it uses, from the TypeScript sources) into one self-contained `dist/create.js`, and
 * puts the repository's LICENSE beside the README.
 *
 * `npm create converge` installs the package it runs before running it. Depending on
 * `@converge/cli` made that the whole CLI and everything it depends on (~7 700 files, ~49 MB,
 * about 20 s of install on a 2-core machine) just to write a dozen files; the project's own
 * `npm install` installs those anyway. Bundled, it installs one package of ~40 kB.
 */
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const packageDir = join(root, 'packages', 'create-converge');
const { engines } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
  engines: { node: string };
};
const oldest = /^>=\s*(\d+\.\d+)/.exec(engines.node)?.[1];
if (oldest === undefined) throw new Error(`create-converge: engines.node is not >=X.Y: ${engines.node}`);

await build({
  entryPoints: [join(root, 'packages', 'cli', 'src', 'create.ts')],
  outfile: join(packageDir, 'dist', 'create.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: `node${oldest}`,
  // The workspace packages' TypeScript sources, as everywhere in the repository: no dist/ needed.
  conditions: ['@converge/source'],
  legalComments: 'none',
  logLevel: 'warning',
  banner: { js: '// converge init, bundled from @converge/cli by scripts/bundle-create.ts.' },
});
copyFileSync(join(root, 'LICENSE'), join(packageDir, 'LICENSE'));
