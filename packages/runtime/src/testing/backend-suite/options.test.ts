import { describe, expect, it } from 'vitest';
import { OptionsError } from '../../errors.ts';
import { resolveSuiteOptions } from './options.ts';

const makeBackend = () => Promise.reject(new Error('not called'));

describe('resolveSuiteOptions', () => {
  it('defaults every capability to true and the timeout to 10 000 ms', () => {
    const ctx = resolveSuiteOptions({ name: 'x', makeBackend });
    expect(Object.values(ctx.capabilities).every(Boolean)).toBe(true);
    expect(ctx.timeoutMs).toBe(10_000);
    expect(ctx.waitMs).toBe(5000);
  });

  it('turns off only the capabilities set to false', () => {
    const ctx = resolveSuiteOptions({ name: 'x', makeBackend, capabilities: { bookmarks: false } });
    expect(ctx.capabilities.bookmarks).toBe(false);
    expect(ctx.capabilities.pagination).toBe(true);
  });

  it('rejects a missing name, a missing factory and a timeout below one second', () => {
    expect(() => resolveSuiteOptions({ name: '', makeBackend })).toThrow(OptionsError);
    expect(() => resolveSuiteOptions({ name: 'x' } as never)).toThrow(OptionsError);
    expect(() => resolveSuiteOptions({ name: 'x', makeBackend, timeoutMs: 10 })).toThrow(OptionsError);
  });
});
