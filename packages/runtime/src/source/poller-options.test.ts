import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { OptionsError } from '../errors.ts';
import { Poller } from './poller.ts';
import type { PollerOptions } from './poller-options.ts';

const valid: PollerOptions<{ id: string }> = { list: async () => [], keyOf: (i) => i.id };

describe('Poller options', () => {
  it('the smallest valid options build a poller named "poller"', () => {
    expect(new Poller(valid).name).toBe('poller');
    expect(new Poller({ ...valid, name: 'vms' }).name).toBe('vms');
  });

  it('a jitterFactor of 0 and 1 and a backoff cap equal to the base are accepted', () => {
    expect(() => new Poller({ ...valid, jitterFactor: 0 })).not.toThrow();
    expect(() => new Poller({ ...valid, jitterFactor: 1 })).not.toThrow();
    expect(() => new Poller({ ...valid, errorBackoffMs: 5, maxErrorBackoffMs: 5 })).not.toThrow();
    expect(() => new Poller({ ...valid, clock: new VirtualClock() })).not.toThrow();
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a list that is not a function', { list: [] }, 'list'],
    ['a missing list', { list: undefined }, 'list'],
    ['a keyOf that is not a function', { keyOf: 'id' }, 'keyOf'],
    ['a versionOf that is not a function', { versionOf: 'v' }, 'versionOf'],
    ['an intervalMs of 0', { intervalMs: 0 }, 'intervalMs'],
    ['a negative intervalMs', { intervalMs: -1 }, 'intervalMs'],
    ['a NaN intervalMs', { intervalMs: Number.NaN }, 'intervalMs'],
    ['an infinite intervalMs', { intervalMs: Number.POSITIVE_INFINITY }, 'intervalMs'],
    ['a negative jitterFactor', { jitterFactor: -0.1 }, 'jitterFactor'],
    ['a jitterFactor above 1', { jitterFactor: 1.5 }, 'jitterFactor'],
    ['a NaN jitterFactor', { jitterFactor: Number.NaN }, 'jitterFactor'],
    ['a timeoutMs of 0', { timeoutMs: 0 }, 'timeoutMs'],
    ['a negative timeoutMs', { timeoutMs: -5 }, 'timeoutMs'],
    ['a NaN timeoutMs', { timeoutMs: Number.NaN }, 'timeoutMs'],
    ['an errorBackoffMs of 0', { errorBackoffMs: 0 }, 'errorBackoffMs'],
    ['a negative errorBackoffMs', { errorBackoffMs: -1 }, 'errorBackoffMs'],
    ['a NaN errorBackoffMs', { errorBackoffMs: Number.NaN }, 'errorBackoffMs'],
    ['a NaN maxErrorBackoffMs', { maxErrorBackoffMs: Number.NaN }, 'maxErrorBackoffMs'],
    [
      'a maxErrorBackoffMs below errorBackoffMs',
      { errorBackoffMs: 2000, maxErrorBackoffMs: 1000 },
      'maxErrorBackoffMs',
    ],
    ['a maxErrorBackoffMs below the default errorBackoffMs', { maxErrorBackoffMs: 500 }, 'maxErrorBackoffMs'],
    ['a non-boolean resync', { resync: 'yes' }, 'resync'],
    ['a clock without timers', { clock: { now: () => 0 } }, 'clock'],
    ['a logger without methods', { logger: { warn: 1 } }, 'logger'],
    ['an empty name', { name: '' }, 'name'],
    ['a string intervalMs', { intervalMs: '1000' }, 'intervalMs'],
  ])('%s is rejected with an OptionsError naming the field', (_, override, field) => {
    let error: unknown;
    try {
      new Poller({ ...valid, ...override } as PollerOptions<{ id: string }>);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(OptionsError);
    expect((error as OptionsError).field).toBe(field);
  });

  it('options that are not an object are rejected with an OptionsError', () => {
    expect(() => new Poller(null as never)).toThrow(OptionsError);
  });
});
