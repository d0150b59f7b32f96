import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '@converge/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiServer } from './api-server.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tmp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'converge-private-'));
  dirs.push(dir);
  return dir;
}

const modeOf = (path: string): number => statSync(path).mode & 0o777;

function recordingLogger(): {
  logger: Logger;
  warnings: { fields: Record<string, unknown>; message: string }[];
} {
  const warnings: { fields: Record<string, unknown>; message: string }[] = [];
  const logger: Logger = {
    debug() {},
    info() {},
    warn(fields, message) {
      warnings.push({ fields: fields as Record<string, unknown>, message });
    },
    error() {},
    child: () => logger,
  };
  return { logger, warnings };
}

/** Starts and stops a TLS server with a data dir, a kubeconfig and a fault admin token file. */
async function run(root: string, logger: Logger): Promise<void> {
  const server = createApiServer({
    dataDir: join(root, 'data'),
    kubeconfigPath: join(root, 'kube', 'kubeconfig'),
    faultAdmin: { tokenPath: join(root, 'kube', 'fault-admin-token') },
    logger,
  });
  await server.listen();
  await server.close();
}

describe('the files the server writes', () => {
  it('files are 0600 in 0700 directories: kubeconfig, tokens, CA and serving certificates and keys', async () => {
    const root = tmp();
    await run(root, recordingLogger().logger);
    const data = join(root, 'data');
    const pki = join(data, 'pki');
    expect(modeOf(data).toString(8)).toBe('700');
    expect(modeOf(pki).toString(8)).toBe('700');
    expect(readdirSync(pki).sort()).toEqual(
      ['apiserver.crt', 'apiserver.key', 'ca.crt', 'ca.key', 'fault-admin-token', 'token'].sort(),
    );
    for (const name of readdirSync(pki)) expect(modeOf(join(pki, name)).toString(8), name).toBe('600');
    expect(modeOf(join(root, 'kube')).toString(8)).toBe('700');
    expect(modeOf(join(root, 'kube', 'kubeconfig')).toString(8)).toBe('600');
    expect(modeOf(join(root, 'kube', 'fault-admin-token')).toString(8)).toBe('600');
  }, 30_000);

  it('files found looser are tightened at start, with a warning naming each', async () => {
    const root = tmp();
    await run(root, recordingLogger().logger);
    const data = join(root, 'data');
    const pki = join(data, 'pki');
    chmodSync(data, 0o755);
    chmodSync(pki, 0o755);
    for (const name of readdirSync(pki)) chmodSync(join(pki, name), 0o644);
    chmodSync(join(root, 'kube', 'kubeconfig'), 0o644);
    const { logger, warnings } = recordingLogger();
    await run(root, logger);
    expect(modeOf(data).toString(8)).toBe('700');
    expect(modeOf(pki).toString(8)).toBe('700');
    for (const name of readdirSync(pki)) expect(modeOf(join(pki, name)).toString(8), name).toBe('600');
    expect(modeOf(join(root, 'kube', 'kubeconfig')).toString(8)).toBe('600');
    const tightened = warnings.filter((w) => w.message.startsWith('Tightened the permissions'));
    expect(tightened.map((w) => w.fields.path).sort()).toEqual(
      [data, pki, ...readdirSync(pki).map((name) => join(pki, name))].sort(),
    );
    expect(tightened.every((w) => w.fields.mode === '755' || w.fields.mode === '644')).toBe(true);
  }, 30_000);
});

describe('insecure binding', () => {
  it('refuses insecure (plain HTTP, no authentication) beyond loopback unless insecureBindNonLoopback says so', () => {
    expect(() => createApiServer({ insecure: true, host: '0.0.0.0' })).toThrow(/host.*loopback/);
    expect(() => createApiServer({ insecure: true, host: '192.168.1.7' })).toThrow(/insecureBindNonLoopback/);
    expect(() => createApiServer({ insecure: true, host: 'example.com' })).toThrow(/loopback/);
    for (const host of ['127.0.0.1', '127.0.0.2', '::1', 'localhost'])
      expect(() => createApiServer({ insecure: true, host })).not.toThrow();
    expect(() =>
      createApiServer({ insecure: true, host: '0.0.0.0', insecureBindNonLoopback: true }),
    ).not.toThrow();
    // With TLS and a token, any address is fine.
    expect(() => createApiServer({ host: '0.0.0.0' })).not.toThrow();
  });
});
