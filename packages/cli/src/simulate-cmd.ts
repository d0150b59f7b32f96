/**
 * `converge simulate SCENARIO.ts`: imports the scenario module (as `converge dev` imports operator
 * modules), runs it through `@converge/simulation`'s seeds and prints the report: words, or JSON
 * with `--json`. Exit 0 when every seed holds, 1 at a failing seed (or a scenario that cannot be
 * loaded), 2 for a fault name or option the simulator refuses.
 */
import {
  defineScenario,
  formatReport,
  parseFaults,
  type Scenario,
  ScenarioError,
  type SeedOutcome,
  SimulationOptionsError,
  simulate,
  UnknownFaultError,
} from '@converge/simulation';
import { describeError, ScenarioModuleError } from './errors.ts';
import { importModule } from './operator-module.ts';
import type { RunIo } from './process-io.ts';
import { SIMULATE_HELP, type SimulateArgs } from './simulate-args.ts';

/** How often the seeds counter on a terminal is redrawn. */
const PROGRESS_MS = 200;

/**
 * Imports `file` and returns its default export as a checked scenario. Throws a
 * {@link ScenarioModuleError} naming the file if it does not exist, its import fails, or its
 * default export is missing or not a scenario (`field` then names what is wrong).
 */
export async function loadScenario(file: string): Promise<Scenario> {
  const imported = await importModule(
    file,
    (reason, options) => new ScenarioModuleError(file, reason, options),
  );
  const exported = imported.default;
  if (exported === undefined)
    throw new ScenarioModuleError(file, 'has no default export: export default defineScenario({ … })');
  if (typeof exported === 'function')
    throw new ScenarioModuleError(
      file,
      'exports a function by default, as an operator module does; a scenario module exports defineScenario({ name, operator, setup, invariants })',
    );
  try {
    return defineScenario(exported as Scenario);
  } catch (error) {
    if (!(error instanceof ScenarioError)) throw error;
    throw new ScenarioModuleError(file, `has no scenario as its default export: ${describeError(error)}`, {
      cause: error,
      field: error.field,
    });
  }
}

/** Runs `converge simulate`; returns the exit code. */
export async function runSimulate(args: SimulateArgs, io: RunIo): Promise<number> {
  // The names first: a typo in --faults is a usage error before anything is imported.
  try {
    if (args.faults !== undefined) parseFaults(args.faults);
  } catch (error) {
    if (error instanceof UnknownFaultError) return usage(io, `--faults: ${error.message}`);
    throw error;
  }
  const scenario = await loadScenario(args.scenario);
  const progress =
    io.errIsTerminal === true ? counter(args.seed === undefined ? (args.seeds ?? 100) : 1) : undefined;
  let report: Awaited<ReturnType<typeof simulate>>;
  try {
    report = await simulate(scenario, {
      ...(args.seed === undefined ? { seeds: args.seeds ?? 100 } : { seed: args.seed }),
      ...(args.faults === undefined ? {} : { faults: args.faults }),
      replicas: args.replicas,
      sharded: args.sharded,
      ...(args.sharded ? { shardBy: args.shardBy } : {}),
      ...(args.onlyFaults === undefined ? {} : { onlyFaults: args.onlyFaults }),
      scenarioFile: args.scenario,
      ...(progress === undefined ? {} : { onSeed: progress.seen }),
    });
  } catch (error) {
    // The arguments were checked against the simulator's limits; this is the backstop.
    if (error instanceof SimulationOptionsError || error instanceof UnknownFaultError)
      return usage(io, error.message);
    throw error;
  } finally {
    progress?.clear();
  }
  io.out(args.json ? JSON.stringify(report, null, 2) : formatReport(report));
  return report.passed ? 0 : 1;
}

function usage(io: RunIo, problem: string): number {
  io.err(`converge simulate: ${problem}`);
  io.err('');
  io.err(SIMULATE_HELP);
  return 2;
}

/** A seeds counter redrawn in place on stderr (a terminal only: never in a log or a pipe). */
function counter(total: number): { seen: (outcome: SeedOutcome) => void; clear: () => void } {
  let done = 0;
  let drawn = 0;
  let shown = false;
  return {
    seen: () => {
      done++;
      const now = performance.now();
      if (now - drawn < PROGRESS_MS && done < total) return;
      drawn = now;
      shown = true;
      process.stderr.write(`\rconverge simulate: seed ${done} of ${total}\u001b[K`);
    },
    clear: () => {
      if (shown) process.stderr.write('\r\u001b[K');
    },
  };
}
