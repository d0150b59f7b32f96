/**
 * The compiler the repository builds with: TypeScript 7, the native (Go) port of `tsc`, installed
 * as the devDependency `typescript-native` (an alias of `typescript@7`). It checks as TypeScript 6
 * does and emits the same JavaScript and declarations (only its quotes differ), in about a
 * third of the wall time and a quarter of the CPU: a build of every package from nothing took 31 s
 * and ~45 CPU-s with TypeScript 6 on this 2-core machine, 9 s and ~16 CPU-s with 7. The tests pack
 * the packages (a build from nothing) in every run, so this is CPU every run pays.
 *
 * `typescript` (6) stays too: type-aware ESLint and the tests that type-check with the compiler
 * API (docs' code blocks, generated kinds) use its JavaScript API, which TypeScript 7 does not
 * have in the same form; a user project's type check (test/distribution) uses the version a user
 * installs with `npm install -D typescript`.
 *
 * `node scripts/tsc.ts ARGS…` runs it (`npm run build`, `npm run typecheck`); the pack and prepack
 * scripts import {@link TSC}. Both must use one compiler: the build info of one is not read by the
 * other, and a `tsc -b` that finds another's would rebuild everything.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The native compiler's launcher (a Node script that runs the platform's binary). */
export const TSC = join(root, 'node_modules', 'typescript-native', 'bin', 'tsc');

if (import.meta.main) {
  const result = spawnSync(process.execPath, [TSC, ...process.argv.slice(2)], { stdio: 'inherit' });
  if (result.error !== undefined) {
    process.stderr.write(`tsc: ${result.error.message}\n`);
    process.exit(1);
  }
  process.exit(result.status ?? 1);
}
