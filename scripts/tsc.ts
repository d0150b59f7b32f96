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
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The native compiler's launcher (a Node script that runs the platform's binary). */
export const TSC = join(root, 'node_modules', 'typescript-native', 'bin', 'tsc');

/** One error of a type check: where it is (when the compiler names a file) and its message. */
export interface TypeError {
  /** As the compiler prints it: relative to the project's folder when inside it. */
  readonly file?: string;
  /** 1-based. */
  readonly line?: number;
  /** The message, its chain joined with spaces on one line. */
  readonly text: string;
}

/** A diagnostic line of `tsc --pretty false`: `file(line,col): error TS1234: message`. */
const DIAGNOSTIC = /^(.+?)\((\d+),\d+\): error TS\d+: (.*)$/;

/**
 * Type-checks the project of `tsconfig` (a file) with {@link TSC} and returns its errors. For the
 * tests that check code as a user's project would (docs' blocks, typed kinds): TypeScript 6's
 * compiler API in the test's own process took about four times the CPU for the same program.
 * Throws when the compiler did not run to its verdict (a crash, a signal, an error it did not list).
 */
export function typeCheck(tsconfig: string): TypeError[] {
  const result = spawnSync(process.execPath, [TSC, '-p', tsconfig, '--pretty', 'false'], {
    cwd: dirname(tsconfig),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error !== undefined) throw result.error;
  // 0: no errors; 1 or 2: errors, listed on stdout (7 and 6 differ on which).
  if (result.status !== 0 && result.status !== 1 && result.status !== 2)
    throw new Error(`tsc exited with ${result.status} (${result.signal}): ${result.stderr}${result.stdout}`);
  const errors: { file?: string; line?: number; text: string }[] = [];
  for (const line of result.stdout.split('\n')) {
    if (line.trim() === '') continue;
    const last = errors.at(-1);
    // A message's chain continues on indented lines.
    if (/^\s/.test(line) && last !== undefined) {
      last.text += ` ${line.trim()}`;
      continue;
    }
    const match = DIAGNOSTIC.exec(line);
    if (match === null) errors.push({ text: line.replace(/^error TS\d+: /, '') });
    else errors.push({ file: match[1] as string, line: Number(match[2]), text: match[3] as string });
  }
  if (result.status !== 0 && errors.length === 0)
    throw new Error(`tsc exited with ${result.status} and listed no error: ${result.stderr}`);
  return errors;
}

if (import.meta.main) {
  const result = spawnSync(process.execPath, [TSC, ...process.argv.slice(2)], { stdio: 'inherit' });
  if (result.error !== undefined) {
    process.stderr.write(`tsc: ${result.error.message}\n`);
    process.exit(1);
  }
  process.exit(result.status ?? 1);
}
