/**
 * Certificate rotation without a restart: a WebhookServer serving the website example's validator
 * from certificate files (as from a mounted Secret that cert-manager renews). The files are
 * replaced; the next connection presents the new certificate (its SHA-256 fingerprint read with
 * node:tls), and the validator answers over it. A half-replaced pair is never served.
 */

import { X509Certificate } from 'node:crypto';
import { renameSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { generateWebhookCertificates, type WebhookCertificates, WebhookServer } from '@converge/kube';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateWebsite } from '../../examples/website/admission.ts';

const PATH = '/validate-examples-converge-dev-v1alpha1-website';

let dir: string;
let first: WebhookCertificates;
let server: WebhookServer;
let port: number;
let started: Promise<void>;
const stop = new AbortController();

/** Writes `content` to `path` as kubelet updates a mounted Secret: a new file renamed over the old. */
function replace(path: string, content: string): void {
  writeFileSync(`${path}.new`, content);
  renameSync(`${path}.new`, path);
}

const fingerprint = (pem: string): string => new X509Certificate(pem).fingerprint256;

/** The fingerprint of the certificate a new TLS connection is served, verified against `ca`. */
function servedFingerprint(ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca }, () => {
      const { fingerprint256 } = socket.getPeerCertificate();
      socket.end();
      resolve(fingerprint256);
    });
    socket.once('error', reject);
  });
}

/** An AdmissionReview for a Website with `domain`, posted over a new connection trusting `ca`. */
function review(
  ca: string,
  domain: string,
): Promise<{ fingerprint: string; response: Record<string, unknown> }> {
  const body = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'rotation-1',
      kind: { group: 'examples.converge.dev', version: 'v1alpha1', kind: 'Website' },
      resource: { group: 'examples.converge.dev', version: 'v1alpha1', resource: 'websites' },
      operation: 'CREATE',
      name: 'home',
      namespace: 'default',
      userInfo: { username: 'admin' },
      object: {
        apiVersion: 'examples.converge.dev/v1alpha1',
        kind: 'Website',
        metadata: { name: 'home', namespace: 'default' },
        spec: { domain, content: 'c' },
      },
    },
  });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: PATH,
        method: 'POST',
        ca,
        agent: false,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        const served = (res.socket as TLSSocket).getPeerCertificate().fingerprint256;
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ fingerprint: served, response: JSON.parse(text).response }));
      },
    );
    req.once('error', reject);
    req.end(body);
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'converge-cert-rotation-'));
  first = await generateWebhookCertificates({ hosts: ['127.0.0.1'] });
  writeFileSync(join(dir, 'tls.crt'), first.cert);
  writeFileSync(join(dir, 'tls.key'), first.key);
  server = new WebhookServer({
    host: '127.0.0.1',
    port: 0,
    tls: { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') },
  });
  server.validating(PATH, validateWebsite as never);
  started = server.start(stop.signal);
  started.catch(() => {});
  ({ port } = await server.listening());
});
afterAll(async () => {
  stop.abort();
  await started;
  await rm(dir, { recursive: true, force: true });
});

describe('a WebhookServer serving from certificate files', () => {
  it('serves the certificate in the files', async () => {
    expect(await servedFingerprint(first.caCert)).toBe(fingerprint(first.cert));
    const answer = await review(first.caCert, 'my blog');
    expect(answer.fingerprint).toBe(fingerprint(first.cert));
    expect(answer.response).toMatchObject({ uid: 'rotation-1', allowed: false, status: { code: 403 } });
  });

  it('files replaced by a certificate under the same CA: the next connection gets it, no restart', async () => {
    const renewed = await generateWebhookCertificates({
      hosts: ['127.0.0.1'],
      ca: { cert: first.caCert, key: first.caKey },
    });
    expect(fingerprint(renewed.cert)).not.toBe(fingerprint(first.cert));
    replace(join(dir, 'tls.key'), renewed.key);
    replace(join(dir, 'tls.crt'), renewed.cert);
    expect(await servedFingerprint(first.caCert)).toBe(fingerprint(renewed.cert));
    const answer = await review(first.caCert, 'home.example.com');
    expect(answer.fingerprint).toBe(fingerprint(renewed.cert));
    expect(answer.response).toMatchObject({ uid: 'rotation-1', allowed: true });
    expect(server.address?.port).toBe(port); // the same listener
  });

  it('a half-replaced pair (new certificate, old key) is not served; the complete pair is, from a new CA too', async () => {
    const served = await servedFingerprint(first.caCert);
    const other = await generateWebhookCertificates({ hosts: ['127.0.0.1'] }); // a new CA
    replace(join(dir, 'tls.crt'), other.cert); // its key is not there yet
    expect(await servedFingerprint(first.caCert)).toBe(served);
    replace(join(dir, 'tls.key'), other.key);
    expect(await servedFingerprint(other.caCert)).toBe(fingerprint(other.cert));
    // Clients still trusting only the old CA now refuse the server, as an API server with a stale caBundle would.
    await expect(servedFingerprint(first.caCert)).rejects.toThrow(
      /unable to verify|self.signed|certificate/i,
    );
  });
});
