import {
  AlreadyStartedError,
  InvalidResultError,
  NonErrorThrownError,
  OptionsError,
} from '@converge/runtime';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseBindAddress } from '../bind-address/index.ts';
import { ListenFailedError, MetricsErrorCodes } from '../errors.ts';
import { EventLoopMonitor } from '../event-loop.ts';
import { isPanic } from '../panic.ts';
import { startServer } from '../test-harness.ts';
import { OperationsServer } from './operations-server.ts';

describe('bind addresses', () => {
  it('takes controller-runtime forms, and "0" disables', () => {
    expect(parseBindAddress('a', ':8080')).toEqual({ host: undefined, port: 8080, text: ':8080' });
    expect(parseBindAddress('a', '127.0.0.1:9')).toEqual({ host: '127.0.0.1', port: 9, text: '127.0.0.1:9' });
    expect(parseBindAddress('a', '[::1]:0')).toEqual({ host: '::1', port: 0, text: '[::1]:0' });
    expect(parseBindAddress('a', 'localhost:8081')?.host).toBe('localhost');
    expect(parseBindAddress('a', '0')).toBeUndefined();
  });

  it('refuses anything else with an OptionsError naming the field', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        let parsed: ReturnType<typeof parseBindAddress>;
        try {
          parsed = parseBindAddress('metricsBindAddress', text);
        } catch (error) {
          expect(error).toBeInstanceOf(OptionsError);
          expect((error as Error).message).toContain('metricsBindAddress');
          return;
        }
        if (parsed !== undefined) expect(parsed.port).toBeLessThanOrEqual(65_535);
      }),
    );
    for (const bad of [
      '8080',
      ':',
      ':65536',
      'host:port',
      '::1:80',
      ' :80',
      ':80 ',
      42 as unknown as string,
    ]) {
      expect(() => parseBindAddress('x', bad)).toThrow(OptionsError);
    }
  });
});

describe('OperationsServer', () => {
  it('rejects bad options', () => {
    expect(() => new OperationsServer({ metricsBindAddress: 'nope' })).toThrow(/metricsBindAddress/);
    expect(() => new OperationsServer({ eventLoopStallThresholdMs: -1 })).toThrow(
      /eventLoopStallThresholdMs/,
    );
    expect(() => new OperationsServer({ probes: {} as never })).toThrow(/probes/);
    expect(() => new EventLoopMonitor({ intervalMs: 0 })).toThrow(/intervalMs/);
  });

  it('fails to start with a ListenFailedError when its port is taken, and starts once', async () => {
    const first = await startServer({ healthProbeBindAddress: '0' });
    const port = new URL(first.server.url('metrics') as string).port;
    const second = new OperationsServer({
      metricsBindAddress: `127.0.0.1:${port}`,
      healthProbeBindAddress: '0',
    });
    const error = await second.start(new AbortController().signal).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ListenFailedError);
    expect((error as ListenFailedError).code).toBe(MetricsErrorCodes.LISTEN_FAILED);
    expect((error as Error).message).toBe(`could not listen on 127.0.0.1:${port} (EADDRINUSE)`);
    await expect(second.whenListening()).rejects.toBe(error);
    await expect(first.server.start(new AbortController().signal)).rejects.toBeInstanceOf(
      AlreadyStartedError,
    );
    expect(first.server.url('health')).toBeUndefined();
    expect((await first.get('/metrics')).status).toBe(404); // no metrics configured
    await first.stop();
    expect(first.server.url('metrics')).toBeUndefined();
  });

  it('serves everything on one port when both addresses are the same', async () => {
    const probe = await startServer({ healthProbeBindAddress: '0' });
    const port = new URL(probe.server.url('metrics') as string).port;
    await probe.stop();
    const one = new OperationsServer({
      metricsBindAddress: `127.0.0.1:${port}`,
      healthProbeBindAddress: `127.0.0.1:${port}`,
    });
    const abort = new AbortController();
    const run = one.start(abort.signal);
    await one.whenListening();
    expect(one.url('health')).toBe(one.url('metrics'));
    expect((await fetch(`${one.url('health')}/healthz`)).status).toBe(200);
    abort.abort();
    await run;
  });
});

describe('isPanic', () => {
  it('counts what bugs throw, not what reconcilers report', () => {
    expect(isPanic(new NonErrorThrownError('x'))).toBe(true);
    expect(isPanic(new InvalidResultError(42))).toBe(true);
    expect(isPanic(new ReferenceError('x is not defined'))).toBe(true);
    expect(isPanic(new TypeError("Cannot read properties of undefined (reading 'spec')"))).toBe(true);
    expect(isPanic(new Error('wrapped', { cause: new RangeError('Invalid array length') }))).toBe(true);
    expect(isPanic(new TypeError('fetch failed', { cause: new Error('ECONNREFUSED') }))).toBe(false);
    expect(isPanic(new Error('upstream unavailable'))).toBe(false);
  });
});
