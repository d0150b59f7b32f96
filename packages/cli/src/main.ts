import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Command, parseCommand, usageOf } from './args.ts';
import { describeError as describe, OperatorModuleError, ScenarioModuleError, UsageError } from './errors.ts';
import { processIo, type RunIo } from './process-io.ts';

export type { OperatorModule } from './operator-module.ts';
export type { RunIo } from './process-io.ts';

/** Whether this module runs from the TypeScript sources (inside the repository) or from dist/. */
const FROM_SOURCES = import.meta.url.endsWith('.ts');

/**
 * Where the bundled example operators live (used by `converge dev` without modules): the
 * repository's `examples/` when running from sources, the compiled copies in `dist/examples/`
 * (each `operator.js` with its `manifests/`) when installed.
 */
export const EXAMPLES_DIR = fileURLToPath(
  new URL(FROM_SOURCES ? '../../../examples/' : './examples/', import.meta.url),
);

/** Runs the command line; returns the exit code (2 for a usage error). */
export async function main(argv: readonly string[], io: RunIo = processIo()): Promise<number> {
  try {
    return await command(argv, io);
  } finally {
    io.close?.();
  }
}

/**
 * Each command's module is imported when that command runs: `converge run` never loads the API
 * server, `converge --help` none of them (every spawn of the CLI paid for all of them before).
 */
async function command(argv: readonly string[], io: RunIo): Promise<number> {
  let parsed: Command;
  try {
    parsed = parseCommand(argv);
  } catch (error) {
    const usage = error instanceof UsageError ? error : undefined;
    io.err(usage?.message ?? `converge: ${describe(error)}`);
    io.err('');
    io.err(usageOf(usage?.command));
    return 2;
  }
  try {
    switch (parsed.command) {
      case 'help':
        io.out(usageOf(parsed.topic));
        return 0;
      case 'version':
        io.out('converge 0.1.0');
        return 0;
      case 'serve': {
        const { serve } = await import('./serve.ts');
        return await serve(parsed, io, []);
      }
      case 'dev': {
        const { serve } = await import('./serve.ts');
        if (parsed.asServiceAccount) {
          const { operatorModules } = await import('./manifests-cmd.ts');
          return await serve(parsed, io, await operatorModules(parsed.modules), { asServiceAccount: true });
        }
        // No module: the project's (package.json converge.module), else the bundled examples.
        const { projectModules } = await import('./dev-kinds.ts');
        const modules = parsed.modules.length > 0 ? parsed.modules : projectModules();
        return modules !== undefined
          ? await serve(parsed, io, modules)
          : await serve(parsed, io, await bundledExamples(), { bundled: true });
      }
      case 'run':
        return await (await import('./run.ts')).runOperators(parsed, io);
      case 'kv':
        return await (await import('./kv.ts')).runKv(parsed, io);
      case 'import':
        return (await import('./import-cmd.ts')).runImport(parsed, io);
      case 'store':
        return (await import('./store-cmd.ts')).runStore(parsed, io);
      case 'init':
        return (await import('./scaffold/index.ts')).runInit(parsed, io);
      case 'create':
        return (await import('./scaffold/index.ts')).runCreateApi(parsed, io);
      case 'manifests':
        return await (await import('./manifests-cmd.ts')).runManifests(parsed, io);
      case 'simulate':
        return await (await import('./simulate-cmd.ts')).runSimulate(parsed, io);
      case 'why':
        return await (await import('./why-cmd.ts')).runWhy(parsed, io);
    }
  } catch (error) {
    io.err(`converge: ${describe(error)}`);
    const stack = moduleStack(error);
    if (stack !== undefined) io.err(stack);
    return 1;
  }
}

/**
 * The stack of what an operator or scenario module threw, to find the line; not for Node's own
 * errors (a missing file or package: `ENOENT`, `ERR_MODULE_NOT_FOUND`), whose message says it
 * all, nor for a scenario's default export that is no scenario (the message names the field).
 */
function moduleStack(error: unknown): string | undefined {
  const fromModule =
    error instanceof OperatorModuleError ||
    (error instanceof ScenarioModuleError && error.field === undefined);
  if (!fromModule || !(error.cause instanceof Error)) return undefined;
  const code = (error.cause as { code?: unknown }).code;
  return typeof code === 'string' && !code.startsWith('CONVERGE_ERR_') ? undefined : error.cause.stack;
}

async function bundledExamples(): Promise<string[]> {
  const entries = await readdir(EXAMPLES_DIR, { withFileTypes: true });
  return entries
    .filter((e) => e.isDirectory())
    .map((e) => resolve(EXAMPLES_DIR, e.name, FROM_SOURCES ? 'operator.ts' : 'operator.js'))
    .filter((file) => existsSync(file))
    .sort();
}
