import { Store } from '@converge/store';
import { describe, expect, it } from 'vitest';
import { OptionsError } from '../errors.ts';
import { VirtualClock } from '../testing/index.ts';
import { resolveRecorderOptions } from './options.ts';

const backend = new Store({ clock: new VirtualClock() });

describe('event recorder options', () => {
  it('defaults to client-go: burst 25, a token per 5 minutes, 6 minute series, 30 s heartbeat, 1000 buffered', () => {
    const o = resolveRecorderOptions({ backend, component: 'website-controller' });
    expect(o).toMatchObject({
      burst: 25,
      qps: 1 / 300,
      seriesWindowMs: 360_000,
      heartbeatMs: 30_000,
      maxBuffer: 1000,
      maxSeries: 4096,
      maxAttempts: 5,
      retryDelayMs: 1000,
      maxRetryDelayMs: 10_000,
      closeTimeoutMs: 10_000,
    });
    expect(o.instance.startsWith('website-controller')).toBe(true);
  });

  it('cuts the instance to 128 characters', () => {
    expect(
      resolveRecorderOptions({ backend, component: 'c', instance: 'i'.repeat(300) }).instance,
    ).toHaveLength(128);
  });

  it.each([
    ['component', { component: '' }],
    ['component', { component: 'has space' }],
    ['component', { component: '-leading-dash' }],
    ['backend', { backend: {} }],
    ['instance', { instance: '' }],
    ['burst', { burst: 0 }],
    ['qps', { qps: 0 }],
    ['maxBuffer', { maxBuffer: 0 }],
    ['seriesWindowMs', { seriesWindowMs: 0 }],
    ['maxAttempts', { maxAttempts: 0 }],
    ['maxRetryDelayMs', { retryDelayMs: 5000, maxRetryDelayMs: 1000 }],
  ])('rejects a bad %s with an OptionsError naming it', (field, patch) => {
    const attempt = () => resolveRecorderOptions({ backend, component: 'c', ...patch } as never);
    expect(attempt).toThrow(OptionsError);
    expect(attempt).toThrow(new RegExp(`invalid option ${field}`));
  });

  it('accepts a prefixed component name such as example.com/website-controller', () => {
    expect(resolveRecorderOptions({ backend, component: 'example.com/website-controller' }).component).toBe(
      'example.com/website-controller',
    );
  });
});
