import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Cause } from '../workqueue/index.ts';
import { HotLoopDetector, hotLoopSettings } from './hot-loop.ts';

/** A run of `key` at `at` ms after the one before: self-caused or not, with its primary's generation. */
interface Step {
  readonly key: string;
  readonly afterMs: number;
  readonly self: boolean;
  readonly generation: number | undefined;
}

function causesOf(step: Step): Cause[] {
  const object = step.generation === undefined ? {} : { generation: step.generation };
  if (!step.self) return [{ type: 'modified', object }];
  return [
    {
      type: 'modified',
      object,
      writtenBy: { controller: 'c', reconcileId: 'c-1', key: step.key, causes: [] },
    },
  ];
}

/**
 * The rule of `HotLoopOptions`, written as plainly as it reads (brake off): `threshold`
 * self-caused runs in a row within `windowMs`, no generation change in between; any other run or
 * a generation change starts the count again; a flag clears after `windowMs` without a
 * self-caused run.
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

  observe(step: Step, now: number): { selfCaused: boolean; flagged: boolean } {
    let state = this.#keys.get(step.key);
    if (state !== undefined && now - state.lastSelf >= this.windowMs) {
      state.times = [];
      state.flagged = false;
    }
    if (!step.self) {
      if (state !== undefined) {
        state.times = [];
        if (step.generation !== undefined) state.generation = step.generation;
      }
      return { selfCaused: false, flagged: false };
    }
    if (state === undefined) {
      state = { times: [], generation: step.generation, lastSelf: now, flagged: false };
      this.#keys.set(step.key, state);
    } else if (step.generation !== undefined) {
      if (state.generation !== undefined && step.generation !== state.generation) state.times = [];
      state.generation = step.generation;
    }
    state.lastSelf = now;
    if (state.flagged) return { selfCaused: true, flagged: false };
    state.times.push(now);
    if (state.times.length > this.threshold) state.times.shift();
    const flagged = state.times.length >= this.threshold && now - (state.times[0] as number) <= this.windowMs;
    state.flagged = flagged;
    return { selfCaused: true, flagged };
  }

  flagged(key: string, now: number): boolean {
    const state = this.#keys.get(key);
    return state?.flagged === true && now - state.lastSelf < this.windowMs;
  }
}

const step: fc.Arbitrary<Step> = fc.record({
  key: fc.constantFrom('ns/a', 'ns/b'),
  afterMs: fc.oneof(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 40_000 })),
  self: fc.boolean(),
  generation: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
});

describe('HotLoopDetector against the rule it documents', () => {
  it('flags exactly when the rule says, for any threshold, window and runs', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 1_000 }),
        fc.array(step, { maxLength: 80 }),
        (threshold, windowMs, steps) => {
          const detector = new HotLoopDetector('c', hotLoopSettings({ threshold, windowMs }) as never);
          const model = new Model(threshold, windowMs);
          let now = 1_000_000;
          for (const s of steps) {
            now += s.afterMs;
            const verdict = detector.observe(s.key, causesOf(s), now);
            const expected = model.observe(s, now);
            expect({ selfCaused: verdict.selfCaused, flagged: verdict.flagged }).toEqual(expected);
            expect(verdict.deferMs).toBe(0);
            for (const key of ['ns/a', 'ns/b'])
              expect(detector.flagOf(key, now) !== undefined, key).toBe(model.flagged(key, now));
          }
        },
      ),
      // Saturated: the ring's every path (first run, second, wrap-around, a streak broken and
      // started again on a kept ring, threshold 1) is hit within the first ~100 cases.
      { numRuns: 300 },
    );
  });

  it('a streak longer than the ring keeps only the latest threshold runs in the window', () => {
    const detector = new HotLoopDetector('c', hotLoopSettings({ threshold: 3, windowMs: 100 }) as never);
    const self: Step = { key: 'ns/a', afterMs: 0, self: true, generation: undefined };
    // 60 ms apart: any three span 120 ms, over the window, until they come faster.
    const times = [0, 60, 120, 180, 240, 290, 300];
    const flagged = times.map((t) => detector.observe('ns/a', causesOf(self), t).flagged);
    expect(flagged).toEqual([false, false, false, false, false, false, true]);
  });
});
