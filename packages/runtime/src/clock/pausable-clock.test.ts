import { describe, expect, it } from 'vitest';
import { PausableClock } from './pausable-clock.ts';
import { VirtualClock } from './virtual-clock.ts';

describe('PausableClock', () => {
  it('holds the timers that come due while paused and runs them on resume, in due order, continuations between', async () => {
    const base = new VirtualClock({ startMs: 1_000 });
    const clock = new PausableClock(base);
    const seen: string[] = [];
    clock.setTimer(() => seen.push('a@100'), 100);
    clock.setTimer(() => {
      seen.push('b@300');
      void Promise.resolve().then(() => seen.push('b continued'));
    }, 300);
    clock.setTimer(() => seen.push('c@200'), 200);
    const cancelled = clock.setTimer(() => seen.push('cancelled'), 250);
    base.setTimer(() => seen.push('another process@150'), 150);

    await base.advance(50);
    clock.pause();
    expect(clock.paused).toBe(true);
    await base.advance(1_000);
    // time went on for everyone; only the other process's timer ran
    expect(clock.now()).toBe(2_050);
    expect(seen).toEqual(['another process@150']);
    cancelled.cancel();

    await clock.resume();
    expect(clock.paused).toBe(false);
    expect(seen).toEqual(['another process@150', 'a@100', 'c@200', 'b@300', 'b continued']);
    // after resuming, timers run when due again
    clock.setTimer(() => seen.push('after'), 10);
    await base.advance(10);
    expect(seen.at(-1)).toBe('after');
  });

  it('a sleep started before the pause ends only on resume; pause twice holds once, resume when running does nothing', async () => {
    const base = new VirtualClock();
    const clock = new PausableClock(base);
    let woke = false;
    const slept = clock.sleep(100).then(() => {
      woke = true;
    });
    clock.pause();
    clock.pause();
    await base.advance(500);
    expect(woke).toBe(false);
    await clock.resume();
    await slept;
    expect(woke).toBe(true);
    await clock.resume();
    expect(clock.paused).toBe(false);
  });

  it('jump steps now() either way without firing or delaying timers; a non-finite jump is a RangeError', async () => {
    const base = new VirtualClock({ startMs: 10_000 });
    const clock = new PausableClock(base);
    let fired = 0;
    clock.setTimer(() => fired++, 1_000);
    clock.jump(60_000);
    expect(clock.now()).toBe(70_000);
    expect(fired).toBe(0);
    clock.jump(-65_000);
    expect(clock.now()).toBe(5_000);
    await base.advance(1_000);
    expect(fired).toBe(1);
    expect(() => clock.jump(Number.NaN)).toThrow(RangeError);
    expect(() => clock.jump(Number.POSITIVE_INFINITY)).toThrow(RangeError);
    expect(clock.random()).toBeGreaterThanOrEqual(0);
  });
});
