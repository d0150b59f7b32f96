import { ConvergeError, type ConvergeErrorOptions } from '@converge/runtime';

/** Stable codes of the simulator's errors. */
export const SimulationErrorCodes = {
  SCENARIO_INVALID: 'CONVERGE_ERR_SIMULATION_SCENARIO_INVALID',
  OPTIONS_INVALID: 'CONVERGE_ERR_SIMULATION_OPTIONS_INVALID',
  UNKNOWN_FAULT: 'CONVERGE_ERR_SIMULATION_UNKNOWN_FAULT',
} as const;

/** A scenario definition that cannot run: names the field and what it must be. */
export class ScenarioError extends ConvergeError {
  readonly field: string;
  constructor(field: string, expected: string, options?: ConvergeErrorOptions) {
    super(SimulationErrorCodes.SCENARIO_INVALID, `scenario: ${field} must be ${expected}`, options);
    this.field = field;
  }
}

/** Options of `simulate` that cannot run: names the option and what it must be. */
export class SimulationOptionsError extends ConvergeError {
  readonly option: string;
  constructor(option: string, value: unknown, expected: string) {
    super(
      SimulationErrorCodes.OPTIONS_INVALID,
      `simulate: ${option} must be ${expected} (got ${describe(value)})`,
    );
    this.option = option;
  }
}

/** A fault name that is not one of {@link FAULTS}. */
export class UnknownFaultError extends ConvergeError {
  readonly fault: string;
  constructor(fault: string, known: readonly string[]) {
    super(
      SimulationErrorCodes.UNKNOWN_FAULT,
      `unknown fault ${JSON.stringify(fault)}: the faults are ${known.join(', ')}`,
    );
    this.fault = fault;
  }
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value == null) return String(value);
  return typeof value;
}
