import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VirtualClock } from '@converge/runtime/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExecCredentialError } from '../errors.ts';
import { ExecCredentialCache, parseExecCredential } from './exec-credential.ts';
import type { ExecConfig } from './kube-config.ts';

const V1 = 'client.authentication.k8s.io/v1';
let dir: string;

/** A real plugin: counts its runs, records KUBERNETES_EXEC_INFO, prints a token `<arg>-<run>`. */
const PLUGIN = `#!/bin/sh
n=$(( $(cat "$COUNT_FILE" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$COUNT_FILE"
printf '%s' "$KUBERNETES_EXEC_INFO" > "$INFO_FILE"
printf '{"apiVersion":"${V1}","kind":"ExecCredential","status":{"token":"%s-%s","expirationTimestamp":"%s"}}' "$1" "$n" "$EXPIRES"
`;

function script(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, body);
  chmodSync(path, 0o755);
  return path;
}

function plugin(extra: Partial<ExecConfig> = {}, expires = '2030-01-01T00:10:00Z'): ExecConfig {
  return {
    apiVersion: V1,
    command: script('plugin.sh', PLUGIN),
    args: ['tok'],
    env: [
      { name: 'COUNT_FILE', value: join(dir, 'count') },
      { name: 'INFO_FILE', value: join(dir, 'info') },
      { name: 'EXPIRES', value: expires },
    ],
    interactiveMode: 'Never',
    ...extra,
  };
}

const CLUSTER = { server: 'https://10.0.0.1:6443', tls: { ca: 'PEM-CA' } };

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'exec-plugin-test-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('exec credential plugins (client.authentication.k8s.io/v1)', () => {
  it('runs the command with its args and env, non-interactively, and uses the token it prints', async () => {
    const cache = new ExecCredentialCache(
      plugin(),
      CLUSTER,
      new VirtualClock({ startMs: Date.parse('2030-01-01T00:00:00Z') }),
      5_000,
    );
    expect(await cache.get()).toEqual({ token: 'tok-1', expiresAt: Date.parse('2030-01-01T00:10:00Z') });
    expect(JSON.parse(readFileSync(join(dir, 'info'), 'utf8'))).toEqual({
      apiVersion: V1,
      kind: 'ExecCredential',
      spec: { interactive: false },
    });
  });

  it('passes the cluster in KUBERNETES_EXEC_INFO with provideClusterInfo', async () => {
    const cache = new ExecCredentialCache(
      plugin({ provideClusterInfo: true }),
      CLUSTER,
      new VirtualClock(),
      5_000,
    );
    await cache.get();
    expect(JSON.parse(readFileSync(join(dir, 'info'), 'utf8')).spec).toEqual({
      interactive: false,
      cluster: {
        server: 'https://10.0.0.1:6443',
        'certificate-authority-data': Buffer.from('PEM-CA').toString('base64'),
      },
    });
  });

  it('caches the credential until shortly before expirationTimestamp, then runs the plugin again', async () => {
    const clock = new VirtualClock({ startMs: Date.parse('2030-01-01T00:00:00Z') });
    const cache = new ExecCredentialCache(plugin(), CLUSTER, clock, 5_000);
    expect((await cache.get()).token).toBe('tok-1');
    await clock.advance(9 * 60_000);
    expect((await cache.get()).token, 'still valid one minute before expiry').toBe('tok-1');
    await clock.advance(55_000);
    expect((await cache.get()).token, 'refreshed within 10 s of expiry').toBe('tok-2');
    expect(cache.runs).toBe(2);
  });

  it('shares one run between concurrent callers, and runs again after invalidate (a 401)', async () => {
    const cache = new ExecCredentialCache(plugin(), CLUSTER, new VirtualClock({ startMs: 0 }), 5_000);
    const tokens = await Promise.all([cache.get(), cache.get(), cache.get()]);
    expect(tokens.map((t) => t.token)).toEqual(['tok-1', 'tok-1', 'tok-1']);
    expect(readFileSync(join(dir, 'count'), 'utf8').trim()).toBe('1');
    cache.invalidate();
    expect((await cache.get()).token).toBe('tok-2');
  });

  it('keeps a credential without expirationTimestamp until invalidated', async () => {
    const clock = new VirtualClock({ startMs: 0 });
    const cache = new ExecCredentialCache(plugin({}, ''), CLUSTER, clock, 5_000);
    expect(await cache.get()).toEqual({ token: 'tok-1' });
    await clock.advance(365 * 24 * 3_600_000);
    expect((await cache.get()).token).toBe('tok-1');
  });

  const failures: [string, () => ExecConfig, RegExp][] = [
    [
      'exits non-zero (with its stderr)',
      () => ({ ...plugin(), command: script('fail.sh', '#!/bin/sh\necho "no credentials" >&2\nexit 3\n') }),
      /exited with code 3: no credentials/,
    ],
    [
      'prints something that is not JSON',
      () => ({ ...plugin(), command: script('junk.sh', '#!/bin/sh\necho hello\n') }),
      /no JSON ExecCredential/,
    ],
    [
      'prints another apiVersion',
      () => ({ ...plugin(), apiVersion: 'client.authentication.k8s.io/v1beta1' }),
      /printed apiVersion client.authentication.k8s.io\/v1, but .*v1beta1 was asked for/,
    ],
    [
      'cannot be started (with the install hint)',
      () => ({ ...plugin(), command: join(dir, 'missing'), installHint: 'install it with brew' }),
      /cannot be started: .*install it with brew/,
    ],
    [
      'does not finish in time',
      () => ({ ...plugin(), command: script('slow.sh', '#!/bin/sh\nsleep 5\n') }),
      /did not finish within 300 ms/,
    ],
    [
      'asks for interactive mode Always',
      () => plugin({ interactiveMode: 'Always' }),
      /interactiveMode is Always/,
    ],
  ];
  for (const [what, exec, message] of failures) {
    it(`rejects with ExecCredentialError when the plugin ${what}`, async () => {
      const cache = new ExecCredentialCache(exec(), CLUSTER, new VirtualClock(), 300);
      const error = await cache.get().then(
        () => expect.fail('expected an ExecCredentialError'),
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ExecCredentialError);
      expect((error as Error).message).toMatch(message);
    });
  }
});

describe('parseExecCredential', () => {
  const exec = { apiVersion: V1, command: 'p' };
  const credential = (status: unknown) => JSON.stringify({ apiVersion: V1, kind: 'ExecCredential', status });

  it('accepts a client certificate and key instead of a token', () => {
    expect(parseExecCredential(exec, credential({ clientCertificateData: 'C', clientKeyData: 'K' }))).toEqual(
      {
        clientCertificateData: 'C',
        clientKeyData: 'K',
      },
    );
  });

  it('rejects a status without credentials, a certificate without key, and a bad expiration', () => {
    expect(() => parseExecCredential(exec, credential({}))).toThrow(
      /neither a token nor a client certificate/,
    );
    expect(() => parseExecCredential(exec, credential({ clientCertificateData: 'C' }))).toThrow(/together/);
    expect(() => parseExecCredential(exec, credential({ token: 't', expirationTimestamp: 'soon' }))).toThrow(
      /not a time/,
    );
    expect(() => parseExecCredential(exec, credential({ token: 7 }))).toThrow(
      /status.token must be a string/,
    );
    expect(() => parseExecCredential(exec, JSON.stringify({ apiVersion: V1, kind: 'Other' }))).toThrow(
      ExecCredentialError,
    );
  });
});
