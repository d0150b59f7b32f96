import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { main, parseCommand, UsageError } from '../src/index.ts';
import { parseSimulate } from '../src/simulate-args.ts';
import { spawnConverge } from './processes.ts';

/** The scenario fixtures; the processes run there, so the replay commands name `./FILE.ts`. */
const fixtures = fileURLToPath(new URL('./fixtures/simulate/', import.meta.url));

/** `converge simulate …args` as a real process, in the fixtures' folder: its exit code and output. */
async function simulate(...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  // Whole reports: a --json one with its traces is longer than the default tail.
  const p = spawnConverge(fixtures, ['simulate', ...args], {}, 4 * 1024 * 1024);
  const { code } = await p.exited;
  return { code, out: p.stdout(), err: p.stderr() };
}

/** Runs `main(argv)` in this process; resolves with the exit code and what it printed. */
async function inProcess(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l), stopped: Promise.resolve() };
  const code = await main(argv, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** A report without its timing figures (`0.3 s (25.1 seeds/s)`), the one thing a replay may change. */
const untimed = (text: string): string =>
  text.replace(/\d+\.\d s \((\d+\.\d|∞) seeds\/s\)/g, 'T s (T seeds/s)');

describe('converge simulate', () => {
  it('exits 0 and prints the report when every seed holds', async () => {
    const { code, out, err } = await simulate('./copies.ts', '--seeds', '5');
    expect({ code, err }).toEqual({ code: 0, err: '' });
    expect(out).toMatch(/^ok copies: 5 seeds, faults stale-reads,.* — \d+ reconciles, \d+ faults injected, /);
    const sharded = await simulate('./copies.ts', '--seeds', '3', '--replicas', '3', '--sharded');
    expect({ code: sharded.code, err: sharded.err }).toEqual({ code: 0, err: '' });
    expect(sharded.out).toMatch(/^ok copies: 3 seeds, faults .*, 3 replicas \(sharded\) — /);
    const byUid = await simulate(
      './copies.ts',
      '--seeds',
      '3',
      '--replicas',
      '3',
      '--sharded',
      '--shard-by',
      'uid',
    );
    expect({ code: byUid.code, err: byUid.err }).toEqual({ code: 0, err: '' });
    expect(byUid.out).toMatch(/^ok copies: 3 seeds, faults .*, 3 replicas \(sharded by uid\) — /);
  });

  it('exits 1 at a failing seed naming it, the invariant, the shrunk trace and replay commands that fail the same way, byte for byte', async () => {
    const found = await simulate('./duplicates.ts', '--seeds', '100');
    expect(found.code, found.err).toBe(1);
    expect(found.out).toMatch(/^FAIL duplicates: /);
    const [, seed] = /^seed (\d+) violates invariant "one child each":$/m.exec(found.out) ?? [];
    expect(seed, found.out).toBeDefined();
    expect(found.out).toMatch(/^ {2}Error: p-\d+ has [02-9]\d* children$/m);
    expect(found.out).toMatch(/^shrunk to \d+ faults? \(from \d+, \d+ reruns\); its trace:$/m);
    expect(found.out).toMatch(/^ {2}\d+ms fault #\d+ /m);
    const shrunk =
      /^replay the shrunk failure: npx converge (simulate \.\/duplicates\.ts --seed \d+ --only-faults \S+)$/m.exec(
        found.out,
      )?.[1];
    const asFound = /^replay it as found: +npx converge (simulate .*)$/m.exec(found.out)?.[1];
    expect(asFound).toBe(`simulate ./duplicates.ts --seed ${seed}`);
    expect(shrunk, found.out).toBeDefined();

    // The replay commands, run as printed (the path is unquoted: plain characters).
    const replay = (command: string) => simulate(...command.split(' ').slice(1));
    const [first, second, small, json] = await Promise.all([
      replay(asFound as string),
      replay(asFound as string),
      replay(shrunk as string),
      replay(`${asFound} --json`),
    ]);
    for (const run of [first, second, small]) {
      expect(run.code, run.err).toBe(1);
      expect(run.out).toMatch(/^FAIL duplicates: 1 seed, /);
      expect(run.out).toContain(`\nseed ${seed} violates invariant "one child each":\n`);
    }
    // The same seed twice: the same report but for the timing; and the seed's failure as first found.
    expect(untimed(second.out)).toBe(untimed(first.out));
    const failure = (report: string) =>
      report.slice(report.indexOf('\nseed '), report.indexOf('\nshrunk to'));
    expect(failure(first.out)).toBe(failure(found.out));
    expect(failure(small.out)).toBe(failure(found.out));

    // --json: the report object, traces included, with the same exit code.
    expect(json.code, json.err).toBe(1);
    const report = JSON.parse(json.out) as {
      passed: boolean;
      seedsRun: number;
      failures: {
        seed: number;
        violation: { kind: string; name: string };
        trace: string[];
        replay: string;
      }[];
    };
    expect(report).toMatchObject({ passed: false, seedsRun: 1 });
    expect(report.failures).toHaveLength(1);
    expect(report.failures[0]).toMatchObject({
      seed: Number(seed),
      violation: { kind: 'invariant', name: 'one child each' },
    });
    expect(report.failures[0]?.trace.length).toBeGreaterThan(5);
    expect(report.failures[0]?.replay).toMatch(new RegExp(`duplicates\\.ts --seed ${seed}$`));
  });

  it('exits 1 naming the file when the scenario module throws at import, as converge dev does for a module', async () => {
    const throws = await simulate('./throws.ts');
    expect(throws.code).toBe(1);
    expect(throws.out).toBe('');
    expect(throws.err).toContain(
      'converge: scenario ./throws.ts failed to load: no fixtures at import (CONVERGE_ERR_CLI_SCENARIO_FAILED)',
    );
    // The stack of what it threw, to find the line.
    expect(throws.err).toMatch(/Error: no fixtures at import\n\s+at .*throws\.ts:3:/);
  });

  it('a default export that is no scenario, an operator module given instead, a missing file: exit 1 naming it (in process)', async () => {
    const notScenario = await inProcess('simulate', `${fixtures}not-a-scenario.ts`);
    expect(notScenario.code).toBe(1);
    expect(notScenario.out).toBe('');
    // The field, and no stack (the module did nothing wrong but export the wrong thing).
    expect(notScenario.err).toBe(
      `converge: scenario ${fixtures}not-a-scenario.ts has no scenario as its default export: scenario: setup must be an async function ({ client, sleep }) => void (CONVERGE_ERR_SIMULATION_SCENARIO_INVALID) (CONVERGE_ERR_CLI_SCENARIO_FAILED)`,
    );
    const missing = await inProcess('simulate', 'no-such-scenario.ts');
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(
      /^converge: scenario no-such-scenario\.ts does not exist \(.*no-such-scenario\.ts\)/,
    );
    const operator = await inProcess('simulate', `${fixtures}operator.ts`);
    expect(operator.code).toBe(1);
    expect(operator.err).toContain('exports a function by default, as an operator module does');
  });

  it('a fault name it does not know is a usage error: exit 2 from the real process, before the scenario is imported', async () => {
    const { code, out, err } = await simulate('./throws.ts', '--faults', 'conflicts,typo');
    expect(code).toBe(2);
    expect(out).toBe('');
    const [first, blank, usage] = err.split('\n');
    expect(first).toBe(
      'converge simulate: --faults: unknown fault "typo": the faults are stale-reads, watch-delay, watch-close, conflicts, server-errors, crashes, outages, leader-pause, lease-loss',
    );
    expect(blank).toBe('');
    expect(usage).toBe('Usage: converge simulate SCENARIO.ts [options]');
  });
});

describe('converge simulate usage errors', () => {
  const cases: [argv: string[], message: string][] = [
    [['simulate'], 'converge simulate: give the scenario module (converge simulate SCENARIO.ts [options])'],
    [['simulate', 'a.ts', 'b.ts'], 'converge simulate: takes one scenario module, got also "b.ts"'],
    [['simulate', 'a.ts', '--seed'], 'converge simulate: --seed needs a value (S, 0-4294967295)'],
    [['simulate', 'a.ts', '--bogus'], 'converge simulate: unknown option --bogus'],
    [
      ['simulate', 'a.ts', '--seeds', 'ten'],
      'converge simulate: --seeds must be a whole number from 1 to 10000000, got "ten"',
    ],
    [
      ['simulate', 'a.ts', '--seeds', '0'],
      'converge simulate: --seeds must be a whole number from 1 to 10000000, got "0"',
    ],
    [
      ['simulate', 'a.ts', '--seed', '1.5'],
      'converge simulate: --seed must be a whole number from 0 to 4294967295, got "1.5"',
    ],
    [
      ['simulate', 'a.ts', '--seed', '4294967296'],
      'converge simulate: --seed must be a whole number from 0 to 4294967295, got "4294967296"',
    ],
    [
      ['simulate', 'a.ts', '--replicas', '17'],
      'converge simulate: --replicas must be a whole number from 1 to 16, got "17"',
    ],
    [
      ['simulate', 'a.ts', '--seed', '3', '--seeds', '10'],
      'converge simulate: give --seed S to replay one seed or --seeds N to run seeds 1 to N, not both',
    ],
    [
      ['simulate', 'a.ts', '--only-faults', '1,2'],
      'converge simulate: --only-faults replays faults of one seed; give the --seed they come from',
    ],
    [
      ['simulate', 'a.ts', '--seed', '3', '--only-faults', '1,,2'],
      'converge simulate: --only-faults must be fault ids (whole numbers from 1) separated by commas, or none, got "1,,2"',
    ],
    [
      ['simulate', 'a.ts', '--faults', 'Conflicts; crashes'],
      'converge simulate: --faults must be fault classes separated by commas (conflicts,crashes), all or none, got "Conflicts; crashes"',
    ],
    [['simulate', 'a.ts', '--json=yes'], 'converge simulate: --json takes no value, got "yes"'],
    [
      ['simulate', 'a.ts', '--sharded'],
      'converge simulate: --sharded shares keys between replicas: give --replicas 2 or more',
    ],
    [
      ['simulate', 'a.ts', '--sharded=1', '--replicas', '2'],
      'converge simulate: --sharded takes no value, got "1"',
    ],
    [
      ['simulate', 'a.ts', '--replicas', '2', '--sharded', '--shard-by', 'name'],
      'converge simulate: --shard-by must be key or uid, got "name"',
    ],
    [['simulate', 'a.ts', '--shard-by', 'uid'], 'converge simulate: --shard-by is only used with --sharded'],
    // Checked by the simulator's own list once the command runs (parsing loads no simulator).
    [
      ['simulate', 'a.ts', '--faults', 'crashes,all'],
      'converge simulate: --faults: unknown fault "all": the faults are stale-reads, watch-delay, watch-close, conflicts, server-errors, crashes, outages, leader-pause, lease-loss',
    ],
  ];

  for (const [argv, message] of cases) {
    it(`converge ${argv.map((a) => JSON.stringify(a)).join(' ')} → exit 2: ${message}`, async () => {
      const result = await inProcess(...argv);
      expect(result.code).toBe(2);
      const [first, blank, usage] = result.err.split('\n');
      expect(first).toBe(message);
      expect(blank).toBe('');
      expect(usage).toBe('Usage: converge simulate SCENARIO.ts [options]');
      expect(result.out).toBe('');
    });
  }

  it('parses the options into what simulate() takes, with 100 seeds by default', () => {
    expect(parseCommand(['simulate', 's.ts'])).toEqual({
      command: 'simulate',
      scenario: 's.ts',
      seeds: 100,
      seed: undefined,
      faults: undefined,
      replicas: 1,
      sharded: false,
      shardBy: 'key',
      onlyFaults: undefined,
      json: false,
    });
    expect(
      parseSimulate([
        's.ts',
        '--seed',
        '0',
        '--faults',
        'conflicts,crashes',
        '--replicas=3',
        '--sharded',
        '--shard-by',
        'uid',
        '--only-faults',
        'none',
        '--json',
      ]),
    ).toEqual({
      scenario: 's.ts',
      seeds: undefined,
      seed: 0,
      faults: 'conflicts,crashes',
      replicas: 3,
      sharded: true,
      shardBy: 'uid',
      onlyFaults: [],
      json: true,
    });
    expect(parseSimulate(['--seed', '7', '--only-faults', '4,1', 's.ts'])).toMatchObject({
      seed: 7,
      onlyFaults: [4, 1],
    });
    expect(parseSimulate(['s.ts', '--bogus', '-h'])).toEqual({ help: true });
  });

  it('converge simulate --help and converge help simulate print its usage; converge help lists it', async () => {
    for (const argv of [
      ['simulate', '--help'],
      ['help', 'simulate'],
    ]) {
      const result = await inProcess(...argv);
      expect(result.code).toBe(0);
      expect(result.out.split('\n')[0]).toBe('Usage: converge simulate SCENARIO.ts [options]');
    }
    expect((await inProcess('help')).out).toMatch(/^ {2}simulate FILE {4}Run a scenario/m);
  });

  it('for any argv, parseSimulate returns options within the simulator’s limits or throws a one-line UsageError', () => {
    const word = fc.constantFrom(
      's.ts',
      './dir/scenario.ts',
      '--seeds',
      '--seed',
      '--faults',
      '--replicas',
      '--only-faults',
      '--json',
      '--help',
      '-h',
      '--',
      '-',
      '-1',
      '0',
      '1',
      '16',
      '17',
      '100',
      '10000000',
      '4294967295',
      '4294967296',
      '99999999999',
      '1.5',
      '1e3',
      '0x10',
      ' 1',
      'none',
      'all',
      'conflicts,crashes',
      'crashes,,conflicts',
      '1,2,3',
      '1,0',
      '__proto__',
      '--__proto__',
      '--constructor',
      '--seeds=',
      '--seed=-1',
      '--json=1',
    );
    const arg = fc.oneof(
      { weight: 4, arbitrary: word },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 10 }) },
      { weight: 1, arbitrary: fc.tuple(word, fc.string({ maxLength: 6 })).map(([a, b]) => `${a}=${b}`) },
    );
    fc.assert(
      fc.property(fc.array(arg, { maxLength: 7 }), (argv) => {
        let parsed: ReturnType<typeof parseSimulate>;
        try {
          parsed = parseSimulate(argv);
        } catch (error) {
          expect(error).toBeInstanceOf(UsageError);
          const { message, command } = error as UsageError;
          expect(command).toBe('simulate');
          expect(message).toMatch(/^converge simulate: \S/);
          expect(message).not.toMatch(/[\n\r\u2028\u2029]/);
          expect(message.length).toBeLessThan(400);
          return;
        }
        if ('help' in parsed) return;
        expect(typeof parsed.scenario).toBe('string');
        expect(parsed.seed === undefined).not.toBe(parsed.seeds === undefined);
        const within = (n: number | undefined, min: number, max: number) =>
          n === undefined || (Number.isInteger(n) && n >= min && n <= max);
        expect(within(parsed.seeds, 1, 10_000_000)).toBe(true);
        expect(within(parsed.seed, 0, 2 ** 32 - 1)).toBe(true);
        expect(within(parsed.replicas, 1, 16)).toBe(true);
        expect(parsed.onlyFaults === undefined || parsed.seed !== undefined).toBe(true);
        for (const id of parsed.onlyFaults ?? []) expect(within(id, 1, 2 ** 31)).toBe(true);
      }),
      { numRuns: 1_500 },
    );
  });
});
