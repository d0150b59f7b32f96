import { describe, expect, it } from 'vitest';
import { OptionsError } from '../errors.ts';
import { LeaderElector } from './elector.ts';
import type { LeaderLock } from './lock.ts';
import { MemoryLock } from './memory-lock.ts';
import type { LeaderElectorOptions } from './options.ts';
import { resolveElectorOptions } from './options.ts';

const lock = new MemoryLock().locker('a');

function rejected(options: Partial<LeaderElectorOptions>): OptionsError {
  try {
    new LeaderElector({ lock, ...options });
  } catch (error) {
    expect(error).toBeInstanceOf(OptionsError);
    return error as OptionsError;
  }
  throw new Error('expected an OptionsError');
}

describe('LeaderElector options', () => {
  it("defaults to client-go's timings: lease 15 s, renew deadline 10 s, retry 2 s, release on cancel", () => {
    const resolved = resolveElectorOptions({ lock });
    expect(resolved).toMatchObject({
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      releaseOnCancel: true,
      identity: 'a',
      name: 'memory',
    });
  });

  it('rejects a lease duration not longer than the renew deadline', () => {
    expect(rejected({ leaseDurationMs: 10_000 }).field).toBe('leaseDurationMs');
    expect(rejected({ leaseDurationMs: 5_000 }).field).toBe('leaseDurationMs');
  });

  it('rejects a renew deadline not longer than 1.2 × the retry period', () => {
    expect(rejected({ renewDeadlineMs: 2_400 }).field).toBe('renewDeadlineMs');
    expect(() => new LeaderElector({ lock, renewDeadlineMs: 2_401 })).not.toThrow();
  });

  it('rejects zero, negative, infinite and NaN durations, naming the field', () => {
    expect(rejected({ retryPeriodMs: 0 }).field).toBe('retryPeriodMs');
    expect(rejected({ renewDeadlineMs: -1 }).field).toBe('renewDeadlineMs');
    expect(rejected({ leaseDurationMs: Number.POSITIVE_INFINITY }).field).toBe('leaseDurationMs');
    expect(rejected({ retryPeriodMs: Number.NaN }).field).toBe('retryPeriodMs');
  });

  it('rejects a missing lock, a lock without identity, and a non-boolean releaseOnCancel', () => {
    expect(rejected({ lock: undefined as unknown as LeaderLock }).field).toBe('lock');
    expect(rejected({ lock: { ...lock, identity: '', describe: () => 'x' } }).field).toBe('lock.identity');
    expect(rejected({ releaseOnCancel: 'yes' as unknown as boolean }).field).toBe('releaseOnCancel');
    expect(rejected({ name: '' }).field).toBe('name');
  });
});
