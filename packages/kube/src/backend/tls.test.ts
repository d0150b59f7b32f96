import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { UnavailableError } from '@converge/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadKubeconfig } from '../config/index.ts';
import { configMaps } from './fault-test-support.ts';
import { KubeBackend } from './kube-backend.ts';

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const openssl = hasOpenssl();
let dir: string;
let server: Server;
let url: string;

/** Makes a key and a certificate signed by the test CA. */
function issue(name: string, subject: string, extension: string): void {
  const ext = join(dir, `${name}.ext`);
  writeFileSync(ext, `${extension}\n`);
  const run = (...args: string[]): void => {
    execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  };
  run(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
    '-subj',
    subject,
  );
  run(
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    `${name}.crt`,
    '-days',
    '1',
    '-extfile',
    ext,
  );
}

beforeAll(async () => {
  if (!openssl) return;
  dir = mkdtempSync(join(tmpdir(), 'kube-tls-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-subj',
      '/CN=test-ca',
      '-days',
      '1',
    ],
    { cwd: dir, stdio: 'ignore' },
  );
  issue('server', '/CN=kube-apiserver', 'subjectAltName=DNS:kube.internal');
  issue('alice', '/CN=alice', 'extendedKeyUsage=clientAuth');
  issue('robot', '/CN=robot', 'extendedKeyUsage=clientAuth');
  const read = (file: string): string => readFileSync(join(dir, file), 'utf8');
  // Answers with the client certificate's common name, like an API server authenticating by certificate.
  server = createServer(
    {
      key: read('server.key'),
      cert: read('server.crt'),
      ca: read('ca.crt'),
      requestCert: true,
      rejectUnauthorized: false,
    },
    (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      const user = (req.socket as TLSSocket).authorized ? String(peer.subject?.CN ?? '') : 'anonymous';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'whoami', namespace: 'default' },
          data: { user },
        }),
      );
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  if (!openssl) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

function kubeconfig(clusterFields: Record<string, unknown>, userFields: Record<string, unknown>): string {
  const path = join(dir, `kubeconfig-${Math.random().toString(36).slice(2)}`);
  writeFileSync(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: url, ...clusterFields } }],
      users: [{ name: 'u', user: userFields }],
      contexts: [{ name: 'k', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'k',
    }),
  );
  return path;
}

async function whoami(path: string): Promise<string | undefined> {
  const backend = new KubeBackend({ config: loadKubeconfig({ path, env: {} }) });
  try {
    const answer = await backend.get<{ metadata: object; data?: { user?: string } }>(configMaps, {
      namespace: 'default',
      name: 'whoami',
    });
    return answer.data?.user;
  } finally {
    await backend.close();
  }
}

const verified = { 'certificate-authority': 'ca.crt', 'tls-server-name': 'kube.internal' };

describe.skipIf(!openssl)('TLS from a kubeconfig (certificates made with openssl)', () => {
  it('presents the client certificate and key files, verifying the server with the CA file and tls-server-name', async () => {
    expect(
      await whoami(kubeconfig(verified, { 'client-certificate': 'alice.crt', 'client-key': 'alice.key' })),
    ).toBe('alice');
  });

  it('presents client certificate and key data', async () => {
    const data = (file: string): string => readFileSync(join(dir, file)).toString('base64');
    const user = { 'client-certificate-data': data('alice.crt'), 'client-key-data': data('alice.key') };
    expect(
      await whoami(
        kubeconfig(
          { 'certificate-authority-data': data('ca.crt'), 'tls-server-name': 'kube.internal' },
          user,
        ),
      ),
    ).toBe('alice');
  });

  it('presents the client certificate an exec plugin returns', async () => {
    const pemJson = (file: string): string => JSON.stringify(readFileSync(join(dir, file), 'utf8'));
    const plugin = join(dir, 'cert-plugin.sh');
    const credential = `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"clientCertificateData":${pemJson('robot.crt')},"clientKeyData":${pemJson('robot.key')}}}`;
    writeFileSync(plugin, `#!/bin/sh\ncat <<'EOF'\n${credential}\nEOF\n`);
    chmodSync(plugin, 0o755);
    const exec = {
      apiVersion: 'client.authentication.k8s.io/v1',
      command: './cert-plugin.sh',
      interactiveMode: 'Never',
    };
    expect(await whoami(kubeconfig(verified, { exec }))).toBe('robot');
  });

  it('rejects a server whose certificate does not match the name verified, unless insecure-skip-tls-verify', async () => {
    const error = await whoami(kubeconfig({ 'certificate-authority': 'ca.crt' }, {})).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as Error).message).toMatch(/TLS/);
    expect(await whoami(kubeconfig({ 'insecure-skip-tls-verify': true }, {}))).toBe('anonymous');
  });
});
