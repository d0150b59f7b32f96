import { X509Certificate } from 'node:crypto';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { allowed } from '@converge/runtime';
import { VirtualClock } from '@converge/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeErrorCodes } from '../errors.ts';
import { generateWebhookCertificates, type WebhookCertificates } from './certificates.ts';
import { WebhookTlsError } from './errors.ts';
import { WebhookServer } from './webhook-server.ts';
import {
  admissionReview,
  responseOf,
  runServer,
  servedCertificate,
  website,
} from './webhook-test-support.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'converge-webhook-tls-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function handshake(url: string, options: { maxVersion?: 'TLSv1.1' | 'TLSv1.2' }): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(
      {
        host: hostname,
        port: Number(port),
        rejectUnauthorized: false,
        minVersion: 'TLSv1',
        ciphers: 'DEFAULT@SECLEVEL=0',
        ...options,
      },
      () => {
        resolve(`connected ${socket.getProtocol()}`);
        socket.end();
      },
    );
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(`refused ${error.code}`));
  });
}

describe('generated development certificates', () => {
  it('serve a certificate for the given hosts, signed by the CA the server exposes as caBundle', async () => {
    const running = await runServer((server) => server.validating('/v', { validate: () => allowed() }));
    try {
      const served = await servedCertificate(running.url, running.ca);
      expect(served.subjectaltname).toBe('IP Address:127.0.0.1, DNS:localhost');
      const ca = new X509Certificate(running.ca);
      expect(ca.ca).toBe(true);
      expect(new X509Certificate(served.raw).verify(ca.publicKey)).toBe(true);
      const answer = await running.post('/v', admissionReview({ object: website() }));
      expect(responseOf(answer).allowed).toBe(true);
    } finally {
      await running.stop();
    }
  });

  it('are not trusted by a client that does not hold the CA', async () => {
    const running = await runServer(() => {});
    const other = await generateWebhookCertificates();
    try {
      await expect(servedCertificate(running.url, other.caCert)).rejects.toMatchObject({
        code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      });
    } finally {
      await running.stop();
    }
  });

  it('refuse TLS 1.1 with a protocol version alert and accept TLS 1.2', async () => {
    const running = await runServer(() => {});
    try {
      expect(await handshake(running.url, { maxVersion: 'TLSv1.1' })).toBe(
        'refused ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION',
      );
      expect(await handshake(running.url, { maxVersion: 'TLSv1.2' })).toBe('connected TLSv1.2');
    } finally {
      await running.stop();
    }
  });
});

describe('certificate files', () => {
  let ca: WebhookCertificates;
  beforeAll(async () => {
    ca = await generateWebhookCertificates({ hosts: ['127.0.0.1', 'localhost'] });
  });
  const issue = () =>
    generateWebhookCertificates({
      hosts: ['127.0.0.1', 'localhost'],
      ca: { cert: ca.caCert, key: ca.caKey },
    });
  const serialOf = (pem: string) => new X509Certificate(pem).serialNumber;

  it('are reloaded when replaced: new connections get the new certificate, without a restart, never a half-written pair', async () => {
    const certFile = join(dir, 'tls.crt');
    const keyFile = join(dir, 'tls.key');
    writeFileSync(certFile, ca.cert);
    writeFileSync(keyFile, ca.key);
    const running = await runServer(
      (server) => server.validating('/v', { validate: () => allowed() }),
      {
        tls: { certFile, keyFile },
      },
      ca.caCert,
    );
    try {
      expect((await servedCertificate(running.url, ca.caCert)).serialNumber).toBe(serialOf(ca.cert));

      // The new certificate is written before its key: until the key follows, the old pair serves.
      const second = await issue();
      writeFileSync(certFile, second.cert);
      expect((await servedCertificate(running.url, ca.caCert)).serialNumber).toBe(serialOf(ca.cert));
      const warned = running.logger.records.filter((r) => r.message.startsWith('Cannot reload'));
      expect(warned).toHaveLength(1);
      expect(warned[0]?.fields.code).toBe(KubeErrorCodes.WEBHOOK_TLS_INVALID);
      writeFileSync(keyFile, second.key);
      expect((await servedCertificate(running.url, ca.caCert)).serialNumber).toBe(serialOf(second.cert));

      // A truncated file never replaces a working pair.
      writeFileSync(certFile, second.cert.slice(0, 100));
      expect((await servedCertificate(running.url, ca.caCert)).serialNumber).toBe(serialOf(second.cert));

      // Replaced atomically (as a mounted Secret is updated): picked up at once.
      const third = await issue();
      writeFileSync(`${certFile}.new`, third.cert);
      writeFileSync(`${keyFile}.new`, third.key);
      renameSync(`${keyFile}.new`, keyFile);
      renameSync(`${certFile}.new`, certFile);
      expect((await servedCertificate(running.url, ca.caCert)).serialNumber).toBe(serialOf(third.cert));

      // Same server, same port, still answering.
      const answer = await running.post('/v', admissionReview({ object: website() }));
      expect(responseOf(answer).allowed).toBe(true);
      expect(running.server.address?.url).toBe(running.url);
    } finally {
      await running.stop();
    }
  });

  it('are also re-read every certificateCheckIntervalMs on the clock, before any new connection', async () => {
    const certFile = join(dir, 'timer.crt');
    const keyFile = join(dir, 'timer.key');
    writeFileSync(certFile, ca.cert);
    writeFileSync(keyFile, ca.key);
    const clock = new VirtualClock();
    const running = await runServer(
      () => {},
      { tls: { certFile, keyFile }, clock, certificateCheckIntervalMs: 5_000 },
      ca.caCert,
    );
    try {
      const next = await issue();
      writeFileSync(keyFile, next.key);
      writeFileSync(certFile, next.cert);
      const loaded = () =>
        running.logger.records.filter((r) => r.message === 'Loaded a new webhook certificate');
      await clock.advance(4_999);
      expect(loaded()).toHaveLength(0);
      await clock.advance(1);
      expect(loaded().map((r) => r.fields.serialNumber)).toEqual([serialOf(next.cert)]);
    } finally {
      await running.stop();
    }
  });

  it('that are missing or do not match fail start with WebhookTlsError, and listening() rejects with it', async () => {
    const other = await issue();
    const certFile = join(dir, 'mismatch.crt');
    const keyFile = join(dir, 'mismatch.key');
    writeFileSync(certFile, ca.cert);
    writeFileSync(keyFile, other.key);
    for (const tls of [
      { certFile, keyFile },
      { certFile: join(dir, 'absent.crt'), keyFile },
    ]) {
      const server = new WebhookServer({ host: '127.0.0.1', port: 0, tls });
      const listening = server.listening();
      await expect(server.start(new AbortController().signal)).rejects.toBeInstanceOf(WebhookTlsError);
      await expect(listening).rejects.toMatchObject({ code: KubeErrorCodes.WEBHOOK_TLS_INVALID });
    }
  });
});
