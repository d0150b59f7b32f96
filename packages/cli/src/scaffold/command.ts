/** `converge init` and `converge create api` as commands: do the work, say what was made and what next. */
import { isAbsolute, relative } from 'node:path';
import type { RunIo } from '../process-io.ts';
import type { CreateApiArgs, InitArgs } from './args.ts';
import { createApi } from './create-api.ts';
import { initProject } from './init.ts';

/**
 * Runs `converge init`, the project depending on Converge `version` (default: this CLI's); returns
 * the exit code (errors are thrown for main to report).
 */
export function runInit(args: InitArgs, io: RunIo, version?: string): number {
  const result = initProject(args, version);
  io.out(`converge: created ${result.name} in ${result.dir}`);
  for (const file of result.files) io.out(`  ${file}`);
  // Relative when the project is below here (`cd my-operator`), else its absolute path.
  const below = relative(process.cwd(), result.dir);
  const cd = below.startsWith('..') || isAbsolute(below) ? result.dir : below;
  io.out('');
  io.out('Next:');
  if (cd !== '') io.out(`  cd ${cd.includes(' ') ? JSON.stringify(cd) : cd}`);
  io.out('  npm install');
  io.out('  npm test            # type-check, then the tests against an embedded API server');
  io.out('  npm run dev         # the API server and the operator; kubectl at .converge/kubeconfig');
  io.out('  npm run manifests   # config/: CRDs, RBAC, Deployment (see the README to deploy)');
  return 0;
}

/** Runs `converge create api`; returns the exit code (errors are thrown for main to report). */
export function runCreateApi(args: CreateApiArgs, io: RunIo): number {
  const result = createApi(args);
  io.out(
    `converge: added ${result.kind.kind} (${result.kind.group}/${result.kind.version}) to ${result.dir}`,
  );
  for (const file of result.files) io.out(`  ${file}`);
  io.out('');
  io.out('Next: npm test, then npm run manifests for its CRD and RBAC');
  return 0;
}
