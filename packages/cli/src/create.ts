/**
 * `npm create converge` (the `create-converge` package): `converge init` alone. `npm run pack`
 * bundles this module into that package, so that making a project installs one small package
 * instead of the CLI and everything it depends on (the project's own `npm install` brings those).
 */
import { describeError, UsageError } from './errors.ts';
import { processIo, type RunIo } from './process-io.ts';
import { INIT_HELP, parseInit, runInit } from './scaffold/index.ts';

/**
 * Runs `converge init` with `argv` (what follows `create-converge` on its command line); `version`
 * is the Converge version the project depends on. Returns the exit code (2 for a usage error), as
 * `converge init` would.
 */
export function create(argv: readonly string[], version: string, io: RunIo = processIo()): number {
  try {
    let parsed: ReturnType<typeof parseInit>;
    try {
      parsed = parseInit(argv);
    } catch (error) {
      io.err(error instanceof UsageError ? error.message : `converge: ${describeError(error)}`);
      io.err('');
      io.err(INIT_HELP);
      return 2;
    }
    if ('help' in parsed) {
      io.out(INIT_HELP);
      return 0;
    }
    try {
      return runInit(parsed, io, version);
    } catch (error) {
      io.err(`converge: ${describeError(error)}`);
      return 1;
    }
  } finally {
    io.close?.();
  }
}
