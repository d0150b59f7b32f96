/**
 * `@converge/simulation`: deterministic simulation of whole operators. A scenario names an operator
 * module (its default export, unchanged), the user's actions and the invariants that must hold; the
 * simulator runs it on a virtual clock over the store, through seeded fault schedules, and checks
 * the invariants and its own oracles once things settle. The same scenario and seed give the same
 * trace, byte for byte; a failure comes back shrunk to the fewest faults that still fail it, with
 * the command that replays it.
 *
 * - {@link defineScenario} — checks a scenario ({@link ScenarioError} names a bad field).
 * - {@link simulate} — runs seeds; resolves with a {@link SimulationReport}.
 * - {@link FAULTS} — the fault classes; {@link parseFaults} reads a list
 *   ({@link UnknownFaultError} for a bad name).
 * - {@link formatReport} — the report as `converge simulate` prints it.
 *
 * @example
 * import { defineScenario, simulate } from '@converge/simulation';
 *
 * const report = await simulate(defineScenario({ name: 'copies', operator, setup, invariants }), { seeds: 200 });
 * if (!report.passed) console.log(formatReport(report));
 *
 * @module
 */
export { ScenarioError, SimulationErrorCodes, SimulationOptionsError, UnknownFaultError } from './errors.ts';
export { FAULT_RATES, FAULTS, type FaultName, parseFaults } from './faults.ts';
export { formatReport } from './report.ts';
export {
  defineScenario,
  type Invariant,
  type InvariantContext,
  type OperatorModule,
  type Scenario,
  type ScenarioDefinition,
  type SetupContext,
} from './scenario.ts';
export {
  runSeed,
  type SimulateOptions,
  type SimulationFailure,
  type SimulationReport,
  simulate,
} from './simulate.ts';
export type { SeedOutcome, Violation } from './world.ts';
