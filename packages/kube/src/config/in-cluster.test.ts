import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VirtualClock } from '@converge/runtime/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InClusterConfigError } from '../errors.ts';
import { credentialSource } from './credentials.ts';
import { inClusterConfig } from './in-cluster.ts';

const PEM_CA = '-----BEGIN CERTIFICATE-----\nQ0EK\n-----END CERTIFICATE-----\n';
const ENV = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'in-cluster-test-'));
  writeFileSync(join(dir, 'token'), 'token-1\n');
  writeFileSync(join(dir, 'ca.crt'), PEM_CA);
  writeFileSync(join(dir, 'namespace'), 'operators\n');
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('inClusterConfig', () => {
  it("uses KUBERNETES_SERVICE_HOST/PORT, the service account's CA, token file and namespace", () => {
    expect(inClusterConfig({ env: ENV, serviceAccountDir: dir })).toEqual({
      server: 'https://10.96.0.1:443',
      namespace: 'operators',
      tls: { ca: PEM_CA },
      auth: { type: 'tokenFile', path: join(dir, 'token') },
      source: 'in-cluster',
    });
  });

  it('brackets an IPv6 service host', () => {
    const env = { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' };
    expect(inClusterConfig({ env, serviceAccountDir: dir }).server).toBe('https://[fd00::1]:443');
  });

  it('throws InClusterConfigError outside a pod: no service variables, or no service-account files', () => {
    expect(() => inClusterConfig({ env: {}, serviceAccountDir: dir })).toThrow(InClusterConfigError);
    expect(() => inClusterConfig({ env: {}, serviceAccountDir: dir })).toThrow('KUBERNETES_SERVICE_HOST');
    const empty = mkdtempSync(join(tmpdir(), 'in-cluster-empty-'));
    try {
      expect(() => inClusterConfig({ env: ENV, serviceAccountDir: empty })).toThrow(/service-account token/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('re-reads a rotated token file after a minute, and at once after a 401', async () => {
    const clock = new VirtualClock({ startMs: 0 });
    const source = credentialSource(inClusterConfig({ env: ENV, serviceAccountDir: dir }), clock, 1000);
    expect(await source.get()).toEqual({ authorization: 'Bearer token-1' });
    writeFileSync(join(dir, 'token'), 'token-2\n');
    expect(await source.get(), 'cached within the minute').toEqual({ authorization: 'Bearer token-1' });
    await clock.advance(60_000);
    expect(await source.get()).toEqual({ authorization: 'Bearer token-2' });
    writeFileSync(join(dir, 'token'), 'token-3\n');
    expect(source.invalidate()).toBe(true);
    expect(await source.get()).toEqual({ authorization: 'Bearer token-3' });
  });
});
