import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WriteLedger } from '../client/index.ts';
import type { Cause, CauseWriter } from '../workqueue/index.ts';
import { HotLoopDetector, hotLoopSettings } from './hot-loop.ts';
import { ReconcileWriter } from './reconcile-writer.ts';

/**
 * A run of `key`, `afterMs` after the one before. A self-caused run echoes a write of an earlier
 * run of its key that wrote (`echo` picks which, the latest first), directly or through `via`
 * runs of another controller, each of which ran because of the write before (past three links in
 * all the run is not self-caused); with no such run, a write of the key made elsewhere (a writer
 * built by hand). `afterMs` may be the window exactly, or 1 ms less. Its primary's `generation`,
 * if known.
 */
interface Step {
  readonly key: string;
  readonly afterMs: number | 'window' | 'window - 1';
  readonly self: boolean;
  readonly echo: number;
  readonly via: number;
  readonly writes: boolean;
  readonly generation: number | undefined;
}

const ledger = new WriteLedger();

/** What the rule needs of a run that wrote: when it ran, whether it began a streak, its generation. */
interface Written {
  readonly key: string;
  readonly at: number;
  readonly first: boolean;
  readonly generation: number | undefined;
  readonly writer: CauseWriter;
}

function objectOf(step: Step): { generation?: number } {
  return step.generation === undefined ? {} : { generation: step.generation };
}

/** The run `step` echoes, if it is self-caused and its key has written before. */
function echoed(step: Step, written: readonly Written[]): Written | undefined {
  const own = written.filter((w) => w.key === step.key);
  return step.self && own.length > 0 ? own[own.length - 1 - (step.echo % own.length)] : undefined;
}

function causesOf(step: Step, echo: Written | undefined): Cause[] {
  const object = objectOf(step);
  if (!step.self) return [{ type: 'modified', object }];
  let writer: CauseWriter = echo?.writer ?? {
    controller: 'c',
    reconcileId: 'elsewhere',
    key: step.key,
    causes: [],
  };
  for (let i = 0; i < step.via; i++) {
    writer = {
      controller: 'partner',
      reconcileId: `partner-${i}`,
      key: 'partner/key',
      causes: [{ type: 'modified', object: {}, writtenBy: writer }],
    };
  }
  return [{ type: 'modified', object, writtenBy: writer }];
}

/**
 * The rule of `HotLoopOptions`, written as plainly as it reads (brake off): `threshold`
 * self-caused runs in a row within `windowMs`, no generation change in between; any other run or
 * a generation change starts the count again; a flag clears after `windowMs` without a
 * self-caused run. Its corner: a key's first self-caused run is kept in its writes, so a key's
 * second counts when it echoes a write of a first (within the window, same generation), whatever
 * ran in between; counts are kept per key from the second on.
 */
class Model {
  readonly #keys = new Map<
    string,
    { times: number[]; generation: number | undefined; lastSelf: number; flagged: boolean }
  >();

  readonly threshold: number;
  readonly windowMs: number;

  constructor(threshold: number, windowMs: number) {
    this.threshold = threshold;
    this.windowMs = windowMs;
  }

  observe(
    step: Step,
    now: number,
    echo: Written | undefined,
  ): { selfCaused: boolean; flagged: boolean; first: boolean } {
    let state = this.#keys.get(step.key);
    if (state !== undefined && now - state.lastSelf >= this.windowMs) {
      state.times = [];
      state.flagged = false;
    }
    // The chain is followed three links deep: one write and its own writer, or two partners between.
    if (!step.self || step.via > 2) {
      if (state !== undefined) {
        state.times = [];
        if (step.generation !== undefined) state.generation = step.generation;
      }
      return { selfCaused: false, flagged: false, first: false };
    }
    if (state === undefined) {
      const second =
        echo?.first &&
        now - echo.at < this.windowMs &&
        (step.generation === undefined ||
          echo.generation === undefined ||
          step.generation === echo.generation);
      if (this.threshold > 1 && !second) return { selfCaused: true, flagged: false, first: true };
      state = {
        times: second ? [(echo as Written).at] : [],
        generation: step.generation,
        lastSelf: now,
        flagged: false,
      };
      this.#keys.set(step.key, state);
    } else if (step.generation !== undefined) {
      if (state.generation !== undefined && step.generation !== state.generation) state.times = [];
      state.generation = step.generation;
    }
    state.lastSelf = now;
    if (state.flagged) return { selfCaused: true, flagged: false, first: false };
    state.times.push(now);
    if (state.times.length > this.threshold) state.times.shift();
    const flagged = state.times.length >= this.threshold && now - (state.times[0] as number) <= this.windowMs;
    state.flagged = flagged;
    return { selfCaused: true, flagged, first: false };
  }

  flagged(key: string, now: number): boolean {
    const state = this.#keys.get(key);
    return state?.flagged === true && now - state.lastSelf < this.windowMs;
  }
}

const step: fc.Arbitrary<Step> = fc.record({
  key: fc.constantFrom('ns/a', 'ns/b'),
  afterMs: fc.oneof(
    fc.integer({ min: 0, max: 50 }),
    fc.integer({ min: 0, max: 40_000 }),
    fc.constantFrom('window' as const, 'window - 1' as const),
  ),
  // Mostly self-caused runs echoing the latest write, so that streaks get long.
  self: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  echo: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.nat(3) }),
  via: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.nat(3) }),
  writes: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  generation: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined, freq: 3 }),
});

/** Runs `steps` through a detector, each writing run making its writer as a controller would. */
function run(
  threshold: number,
  windowMs: number,
  steps: readonly Step[],
  check: (
    s: Step,
    now: number,
    echo: Written | undefined,
    verdict: ReturnType<HotLoopDetector['observe']>,
    detector: HotLoopDetector,
  ) => void,
): void {
  const detector = new HotLoopDetector('c', hotLoopSettings({ threshold, windowMs }) as never);
  const written: Written[] = [];
  let now = 1_000_000;
  steps.forEach((s, i) => {
    now += s.afterMs === 'window' ? windowMs : s.afterMs === 'window - 1' ? windowMs - 1 : s.afterMs;
    const echo = echoed(s, written);
    const causes = causesOf(s, echo);
    const verdict = detector.observe(s.key, causes, now);
    check(s, now, echo, verdict, detector);
    if (!s.writes) return;
    const scope = new ReconcileWriter(
      ledger,
      'c',
      `c-${i}`,
      s.key,
      { causes, dropped: 0 },
      verdict.first ? now : undefined,
    );
    written.push({
      key: s.key,
      at: now,
      first: verdict.first,
      generation: s.generation,
      writer: scope.writer(),
    });
  });
}

describe('HotLoopDetector against the rule it documents', () => {
  it('flags exactly when the rule says, for any threshold, window and runs', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 1_000 }),
        fc.array(step, { maxLength: 80 }),
        (threshold, windowMs, steps) => {
          const model = new Model(threshold, windowMs);
          run(threshold, windowMs, steps, (s, now, echo, verdict, detector) => {
            const expected = model.observe(s, now, echo);
            expect({
              selfCaused: verdict.selfCaused,
              flagged: verdict.flagged,
              first: verdict.first,
            }).toEqual(expected);
            expect(verdict.deferMs).toBe(0);
            for (const key of ['ns/a', 'ns/b'])
              expect(detector.flagOf(key, now) !== undefined, key).toBe(model.flagged(key, now));
          });
        },
      ),
      // Saturated: the ring's every path (first run, second, wrap-around, a streak broken and
      // started again on a kept ring, threshold 1) and the carried first run's (echoed directly,
      // through a partner, out of the window, at another generation, by a run that wrote nothing
      // and so is not echoed) are hit within the first ~100 cases.
      { numRuns: 300 },
    );
  });

  it('a streak longer than the ring keeps only the latest threshold runs in the window', () => {
    // 60 ms apart: any three span 120 ms, over the window, until they come faster.
    const times = [0, 60, 120, 180, 240, 290, 300];
    const flagged: boolean[] = [];
    let last = 0;
    run(
      3,
      100,
      times.map((t) => {
        const s = {
          key: 'ns/a',
          afterMs: t - last,
          self: true,
          echo: 0,
          via: 0,
          writes: true,
          generation: undefined,
        };
        last = t;
        return s;
      }),
      (_s, _now, _echo, verdict) => flagged.push(verdict.flagged),
    );
    expect(flagged).toEqual([false, false, false, false, false, false, true]);
  });

  it('a key that converges after its own echo keeps no state', () => {
    // Edit, write, echo, nothing more: the steady loop of every controller.
    const steps: Step[] = [];
    for (let i = 0; i < 50; i++) {
      steps.push({
        key: `ns/k${i % 5}`,
        afterMs: 1,
        self: false,
        echo: 0,
        via: 0,
        writes: true,
        generation: 1,
      });
      steps.push({
        key: `ns/k${i % 5}`,
        afterMs: 1,
        self: true,
        echo: 0,
        via: 0,
        writes: false,
        generation: 1,
      });
    }
    const verdicts: boolean[] = [];
    let detector: HotLoopDetector | undefined;
    run(2, 1_000, steps, (_s, _now, _echo, verdict, d) => {
      verdicts.push(verdict.flagged);
      detector = d;
    });
    expect(verdicts.every((f) => !f)).toBe(true);
    expect(detector?.flaggedCount(Number.MAX_SAFE_INTEGER)).toBe(0);
    expect(detector?.trackedKeys).toBe(0);
  });
});
