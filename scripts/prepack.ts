/**
 * Runs before `npm pack` / `npm publish` of a workspace package (its `prepack` script, with the
 * package as the working directory): builds `dist/` (JavaScript, declarations, source maps) with
 * `tsc -b`, puts the repository's LICENSE beside the package's README, and, for `@converge/cli`,
 * compiles the bundled example operators into `dist/examples/` with their manifests, so an
 * installed `converge dev` has something to run.
 *
 * What goes into the tarball is decided by each package's `files` list (no tests, no test
 * support, no `.tsbuildinfo`); `test/packaging/pack.test.ts` installs the tarballs in a project
 * outside the repository and checks that they work.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TSC } from './tsc.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const packageDir = process.cwd();
const { name } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { name: string };

function run(args: readonly string[]): void {
  execFileSync(process.execPath, [TSC, ...args], { cwd: packageDir, stdio: 'inherit' });
}

if (!name.startsWith('@converge/')) {
  throw new Error(`scripts/prepack.ts runs in a @converge/* workspace package, not in ${packageDir}`);
}
run(['-b']);
copyFileSync(join(root, 'LICENSE'), join(packageDir, 'LICENSE'));

if (name === '@converge/cli') {
  const examples = join(root, 'examples');
  const out = join(packageDir, 'dist', 'examples');
  rmSync(out, { recursive: true, force: true });
  run(['-p', 'tsconfig.examples.json']);
  for (const entry of readdirSync(examples, { withFileTypes: true })) {
    const manifests = join(examples, entry.name, 'manifests');
    if (!entry.isDirectory() || !existsSync(manifests)) continue;
    cpSync(manifests, resolve(out, entry.name, 'manifests'), { recursive: true });
  }
}
