import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { get } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startTestServer, type TestServer } from './test-support.ts';

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'converge-apiserver-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface Kubeconfig {
  'current-context': string;
  clusters: { name: string; cluster: { server: string; 'certificate-authority-data'?: string } }[];
  users: { name: string; user: { token?: string } }[];
  contexts: { name: string; context: { cluster: string; user: string; namespace: string } }[];
}

describe('TLS, tokens and the kubeconfig', () => {
  let t: TestServer;
  const kubeconfigPath = (): string => join(dir, 'kube', 'config');

  beforeAll(async () => {
    t = await startTestServer({ secure: true, dataDir: join(dir, 'data'), kubeconfigPath: kubeconfigPath() });
  });
  afterAll(async () => {
    await t.close();
  });

  it('serves HTTPS on 127.0.0.1 with a certificate for 127.0.0.1 and localhost signed by its own CA', async () => {
    expect(t.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const res = await t.request('/api/v1/namespaces');
    expect(res.status).toBe(200);
    const peer = await new Promise<X509Certificate>((resolve, reject) => {
      const req = get(`${t.url}/version`, { ca: t.server.ca }, (r) => {
        const socket = r.socket as unknown as { getPeerX509Certificate(): X509Certificate };
        resolve(socket.getPeerX509Certificate());
        r.resume();
      });
      req.on('error', reject);
    });
    expect(peer.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(peer.checkHost('localhost')).toBe('localhost');
    expect(peer.verify(new X509Certificate(t.server.ca ?? '').publicKey)).toBe(true);
  });

  it('refuses connections from clients that do not trust the CA', async () => {
    await expect(
      new Promise((resolve, reject) =>
        get(`${t.url}/version`, (r) => resolve(r.statusCode)).on('error', reject),
      ),
    ).rejects.toThrow(/self-signed|unable to verify|certificate/i);
  });

  it('answers a missing or wrong bearer token with a 401 Status', async () => {
    const missing = await t.request('/api/v1/namespaces', { anonymous: true });
    expect(missing.status).toBe(401);
    expect(missing.json).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    const wrong = await t.request('/api/v1/namespaces', { token: 'wrong' });
    expect(wrong.status).toBe(401);
    expect((await t.request('/version', { token: 'wrong' })).status).toBe(401);
  });

  it('lets anonymous clients read /version and health checks only', async () => {
    expect((await t.request('/version', { anonymous: true })).status).toBe(200);
    expect((await t.request('/healthz', { anonymous: true })).status).toBe(200);
    expect((await t.request('/api', { anonymous: true })).status).toBe(401);
  });

  it('writes a kubeconfig (mode 0600) with the server, CA data, token and a current converge context in default', () => {
    const path = kubeconfigPath();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const config = parse(readFileSync(path, 'utf8')) as Kubeconfig;
    expect(config['current-context']).toBe('converge');
    expect(config.clusters[0]?.cluster.server).toBe(t.url);
    expect(
      Buffer.from(config.clusters[0]?.cluster['certificate-authority-data'] ?? '', 'base64').toString(),
    ).toBe(t.server.ca);
    expect(config.users[0]?.user.token).toBe(t.server.token);
    expect(config.contexts[0]?.context).toEqual({
      cluster: 'converge',
      user: 'converge',
      namespace: 'default',
    });
  });

  it('reuses the CA, certificate, token and stored objects from the data directory after a restart', async () => {
    await t.request('/api/v1/namespaces/default/configmaps', {
      method: 'POST',
      body: { metadata: { name: 'kept' } },
    });
    const ca = t.server.ca;
    const token = t.server.token;
    await t.close();
    t = await startTestServer({ secure: true, dataDir: join(dir, 'data'), kubeconfigPath: kubeconfigPath() });
    expect(t.server.ca).toBe(ca);
    expect(t.server.token).toBe(token);
    expect((await t.request('/api/v1/namespaces/default/configmaps/kept')).status).toBe(200);
    expect(statSync(join(dir, 'data', 'pki', 'ca.key')).mode & 0o777).toBe(0o600);
  });
});

describe('insecure mode', () => {
  it('serves plain HTTP without authentication and warns loudly', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning.message);
    };
    process.on('warning', onWarning);
    const t = await startTestServer({ insecure: true });
    try {
      expect(t.url).toMatch(/^http:\/\//);
      expect(t.server.token).toBeUndefined();
      expect((await t.request('/api/v1/namespaces', { anonymous: true })).status).toBe(200);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.some((w) => w.includes('INSECURE'))).toBe(true);
    } finally {
      process.off('warning', onWarning);
      await t.close();
    }
  });
});
