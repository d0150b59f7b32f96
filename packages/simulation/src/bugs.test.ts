/**
 * The simulator against operators with the bugs real operators have, one per class, each beside
 * its idiomatic fix (`testdata/bugs/<class>.buggy.ts` and `.fixed.ts`, scenario modules as a user
 * writes them): every buggy one fails within 200 seeds with the violation its class should give,
 * shrinks and replays; every fixed one passes the same 200 seeds.
 */
import { describe, expect, it } from 'vitest';
import { formatReport, type Scenario, type SimulationFailure, simulate } from './index.ts';

interface Pair {
  readonly bug: string;
  /** What catches the buggy operator. */
  readonly kind: 'oracle' | 'invariant';
  readonly name: string;
  /** Whether the buggy operator fails without faults too (a hot loop needs none). */
  readonly failsWithoutFaults: boolean;
}

const PAIRS: readonly Pair[] = [
  { bug: 'hot-loop', kind: 'oracle', name: 'hot-loop', failsWithoutFaults: true },
  {
    bug: 'stale-state',
    kind: 'invariant',
    name: 'one credentials Secret per request',
    failsWithoutFaults: false,
  },
  {
    bug: 'edge-triggered',
    kind: 'invariant',
    name: 'every settings object is published',
    failsWithoutFaults: false,
  },
  {
    bug: 'finalizer-order',
    kind: 'invariant',
    name: 'one bucket per live request, none leaked',
    failsWithoutFaults: false,
  },
  { bug: 'non-idempotent', kind: 'oracle', name: 'differential', failsWithoutFaults: false },
  {
    bug: 'orphans',
    kind: 'invariant',
    name: 'a token lives exactly as long as its request',
    failsWithoutFaults: false,
  },
];

const SEEDS = 200;

/** A scenario module of testdata/bugs (outside this package's sources, so loaded by URL). */
async function scenario(file: string): Promise<Scenario> {
  const module = (await import(new URL(`../testdata/bugs/${file}.ts`, import.meta.url).href)) as {
    default: Scenario;
  };
  return module.default;
}

/** The ids of the faults a trace injected (`… fault #12 conflicts: …`). */
function injected(trace: readonly string[]): number[] {
  return trace.flatMap((line) => {
    const id = / fault #(\d+) /.exec(line)?.[1];
    return id === undefined ? [] : [Number(id)];
  });
}

function firstFailure(failures: readonly SimulationFailure[]): SimulationFailure {
  const failure = failures[0];
  if (failure === undefined) throw new Error('no failure');
  return failure;
}

describe.each(PAIRS)('$bug', ({ bug, kind, name, failsWithoutFaults }) => {
  it(`the buggy operator fails with ${kind} "${name}" within ${SEEDS} seeds; the shrunk failure replays`, async () => {
    const buggy = await scenario(`${bug}.buggy`);
    const report = await simulate(buggy, { seeds: SEEDS, scenarioFile: `${bug}.buggy.ts` });
    expect(report.passed).toBe(false);
    const failure = firstFailure(report.failures);
    expect({ kind: failure.violation.kind, name: failure.violation.name }, formatReport(report)).toEqual({
      kind,
      name,
    });

    const found = injected(failure.trace);
    expect(failure.shrunk.faults.length).toBeLessThanOrEqual(found.length);
    for (const id of failure.shrunk.faults) expect(found).toContain(id);
    expect(failure.replayShrunk).toContain(`--seed ${failure.seed}`);

    const replay = await simulate(buggy, { seed: failure.seed, onlyFaults: failure.shrunk.faults });
    expect(replay.passed).toBe(false);
    const again = firstFailure(replay.failures);
    expect({ kind: again.violation.kind, name: again.violation.name }).toEqual({ kind, name });
  });

  it(`the buggy operator ${failsWithoutFaults ? 'fails' : 'passes'} without faults`, async () => {
    const report = await simulate(await scenario(`${bug}.buggy`), { seeds: 20, faults: 'none' });
    expect(report.passed, formatReport(report)).toBe(!failsWithoutFaults);
  });

  it(`the fixed operator passes ${SEEDS} seeds`, async () => {
    const report = await simulate(await scenario(`${bug}.fixed`), {
      seeds: SEEDS,
      scenarioFile: `${bug}.fixed.ts`,
    });
    expect(report.passed, formatReport(report)).toBe(true);
    expect(report.seedsRun).toBe(SEEDS);
  });

  it('a failing seed gives the same trace byte for byte each time it runs', async () => {
    const buggy = await scenario(`${bug}.buggy`);
    const seed = firstFailure((await simulate(buggy, { seeds: SEEDS, shrink: false })).failures).seed;
    const once = await simulate(buggy, { seed, shrink: false });
    const twice = await simulate(buggy, { seed, shrink: false });
    const trace = JSON.stringify(firstFailure(once.failures).trace);
    expect(JSON.stringify(firstFailure(twice.failures).trace)).toBe(trace);
    expect(trace).toContain('VIOLATION');
  });
});
