import type { Client, Manager } from '@converge/runtime';
import { ScenarioError } from './errors.ts';

/**
 * What an operator module's default export is: it wires controllers into the manager (a promise
 * it returns is awaited; any other value is ignored, so a module that returns what it built fits).
 */
export type OperatorModule = (manager: Manager) => unknown;

/** What a scenario's `setup` gets: the user's side of the world. */
export interface SetupContext {
  /** The runtime's Client over the simulated server. Its own requests are never faulted. */
  readonly client: Client;
  /** Waits on the virtual clock (the operator runs meanwhile). */
  sleep(ms: number): Promise<void>;
  /** A number in [0, 1) from the seed's own stream (the same in the run with and without faults). */
  random(): number;
  /** The virtual time, in milliseconds since the run began. */
  now(): number;
}

/** What an invariant gets, once the system is quiescent after the faults stopped. */
export interface InvariantContext {
  /** The runtime's Client over the simulated server (not faulted). */
  readonly client: Client;
  /** Waits on the virtual clock (the operator keeps running meanwhile). */
  sleep(ms: number): Promise<void>;
  /** The virtual time, in milliseconds since the run began. */
  now(): number;
}

/** An invariant: throws (or rejects) to fail. */
export type Invariant = (context: InvariantContext) => void | Promise<void>;

/**
 * A scenario: the operator under test, the user's actions and what must hold once things settle.
 * `operator` is exactly an operator module's default export and runs unchanged.
 */
export interface ScenarioDefinition {
  readonly name: string;
  readonly operator: OperatorModule;
  readonly setup: (context: SetupContext) => void | Promise<void>;
  /** Checked once the system is quiescent after the faults stopped. Default none. */
  readonly invariants?: Readonly<Record<string, Invariant>>;
  /**
   * The differential oracle: the state reached with faults must equal the state the same seed's
   * actions reach without faults. Default true; false opts out (a scenario whose outcome
   * legitimately depends on timing).
   */
  readonly differential?: boolean;
  /**
   * Reconciles one key may take after the faults stopped before it is a hot loop. Default 50.
   */
  readonly maxReconcilesPerKey?: number;
  /**
   * Virtual time the operator may take to become quiescent after the faults stop. Default
   * 1 800 000 (30 min): longer than the runtime's longest per-key backoff (1 000 s), so a key that
   * failed often during the faults still gets its next try. Waiting costs nothing but its timers.
   */
  readonly settleWithinMs?: number;
  /** Virtual time faults stay on after `setup` returned. Default 20 000. */
  readonly faultWindowMs?: number;
}

/** A checked scenario, as {@link defineScenario} returns it. */
export interface Scenario extends ScenarioDefinition {
  readonly invariants: Readonly<Record<string, Invariant>>;
  readonly differential: boolean;
  readonly maxReconcilesPerKey: number;
  readonly settleWithinMs: number;
  readonly faultWindowMs: number;
}

const SCENARIO = Symbol.for('converge.simulation.scenario');

/**
 * Checks a scenario and applies its defaults. Throws a {@link ScenarioError} naming the field that
 * is wrong.
 *
 * @example
 * export default defineScenario({
 *   name: 'copies',
 *   operator,
 *   setup: async ({ client }) => {
 *     await client.create(configMapType, { metadata: { name: 'a', namespace: 'default', labels: { copy: 'yes' } } });
 *   },
 *   invariants: {
 *     'a copy exists': async ({ client }) => {
 *       await client.get(configMapType, { namespace: 'default', name: 'a-copy' });
 *     },
 *   },
 * });
 */
export function defineScenario(definition: ScenarioDefinition): Scenario {
  if (typeof definition !== 'object' || definition === null)
    throw new ScenarioError('the scenario', 'an object');
  const d = definition as Partial<ScenarioDefinition> & Record<PropertyKey, unknown>;
  if (d[SCENARIO] === true) return definition as Scenario;
  if (typeof d.name !== 'string' || d.name.trim() === '')
    throw new ScenarioError('name', 'a non-empty string');
  if (typeof d.operator !== 'function')
    throw new ScenarioError('operator', "a function (manager) => void: an operator module's default export");
  if (typeof d.setup !== 'function')
    throw new ScenarioError('setup', 'an async function ({ client, sleep }) => void');
  const invariants = d.invariants ?? {};
  if (typeof invariants !== 'object' || invariants === null || Array.isArray(invariants))
    throw new ScenarioError('invariants', 'an object of named functions');
  for (const [name, check] of Object.entries(invariants)) {
    if (typeof check !== 'function')
      throw new ScenarioError(`invariants[${JSON.stringify(name)}]`, 'a function');
  }
  if (d.differential !== undefined && typeof d.differential !== 'boolean')
    throw new ScenarioError('differential', 'a boolean');
  const scenario: Scenario = {
    ...definition,
    invariants,
    differential: d.differential ?? true,
    maxReconcilesPerKey: positive('maxReconcilesPerKey', d.maxReconcilesPerKey, 50),
    settleWithinMs: positive('settleWithinMs', d.settleWithinMs, 1_800_000),
    faultWindowMs: positive('faultWindowMs', d.faultWindowMs, 20_000, true),
  };
  Object.defineProperty(scenario, SCENARIO, { value: true });
  return Object.freeze(scenario);
}

function positive(field: string, value: unknown, fallback: number, zeroOk = false): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < (zeroOk ? 0 : 1))
    throw new ScenarioError(field, zeroOk ? 'a whole number ≥ 0' : 'a whole number ≥ 1');
  return value;
}
