import { describe, expect, it } from 'vitest';
import { type HealthCheck, HealthChecks, healthPath } from './health.ts';

const ok = (name: string): HealthCheck => ({ name, check: () => undefined });
const failing = (name: string, reason: string): HealthCheck => ({ name, check: () => reason });
const q = (query = ''): URLSearchParams => new URLSearchParams(query);

describe('health endpoints, answered as kube-apiserver answers them', () => {
  const healthy = new HealthChecks({
    healthz: [ok('ping')],
    livez: [ok('ping')],
    readyz: [ok('ping'), ok('store')],
  });

  it('all checks passing is 200 "ok", and with ?verbose one line per check and "<endpoint> check passed"', () => {
    expect(healthy.answer('readyz', undefined, q())).toEqual({ status: 200, body: 'ok', failures: [] });
    expect(healthy.answer('readyz', undefined, q('verbose')).body).toBe(
      '[+]ping ok\n[+]store ok\nreadyz check passed\n',
    );
  });

  it('a failing check is a 500 listing every check, the reason withheld from the client but returned for the log', () => {
    const sick = new HealthChecks({
      healthz: [],
      livez: [],
      readyz: [ok('ping'), failing('store', 'snapshot failed: ENOSPC')],
    });
    expect(sick.answer('readyz', undefined, q())).toEqual({
      status: 500,
      body: '[+]ping ok\n[-]store failed: reason withheld\nreadyz check failed\n',
      failures: ['store: snapshot failed: ENOSPC'],
    });
  });

  it('a check that throws has failed', () => {
    const thrower = new HealthChecks({
      healthz: [],
      livez: [
        {
          name: 'log',
          check: () => {
            throw new Error('boom');
          },
        },
      ],
      readyz: [],
    });
    expect(thrower.answer('livez', undefined, q()).failures).toEqual(['log: boom']);
  });

  it('?exclude skips a check (and says which names matched nothing)', () => {
    const sick = new HealthChecks({ healthz: [], livez: [], readyz: [ok('ping'), failing('store', 'x')] });
    expect(sick.answer('readyz', undefined, q('exclude=store&verbose'))).toEqual({
      status: 200,
      body: '[+]ping ok\n[+]store excluded: ok\nreadyz check passed\n',
      failures: [],
    });
    expect(sick.answer('readyz', undefined, q('exclude=store&exclude=nope&verbose')).body).toContain(
      'warn: some health checks cannot be excluded: no matches for "nope"\n',
    );
  });

  it('/<endpoint>/<name> runs one check: ok, a 500 with the reason, or a 404 for an unknown name', () => {
    const sick = new HealthChecks({ healthz: [], livez: [], readyz: [ok('ping'), failing('store', 'x')] });
    expect(sick.answer('readyz', 'ping', q())).toEqual({ status: 200, body: 'ok', failures: [] });
    expect(sick.answer('readyz', 'store', q()).status).toBe(500);
    expect(sick.answer('readyz', 'store', q()).body).toBe('internal server error: x\n');
    expect(sick.answer('readyz', 'nope', q()).status).toBe(404);
  });

  it('paths: the three endpoints, optionally with one check name; anything else is not a health path', () => {
    expect(healthPath('/readyz')).toEqual({ endpoint: 'readyz' });
    expect(healthPath('/livez/ping')).toEqual({ endpoint: 'livez', check: 'ping' });
    expect(healthPath('/healthz/')).toEqual({ endpoint: 'healthz' });
    expect(healthPath('/readyz/a/b')).toBeUndefined();
    expect(healthPath('/version')).toBeUndefined();
  });
});
