import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import type { Logger } from '@converge/runtime';
import { ApiServerErrorCodes, ApiServerStartError } from './errors.ts';
import { ensurePrivateDir, ensurePrivateFile, writePrivateFile } from './private-files.ts';

/** The PEM-encoded certificates and key a TLS server needs. */
export interface TlsMaterial {
  /** The CA certificate (kubeconfig `certificate-authority-data`). */
  readonly ca: string;
  /** The serving certificate, signed by the CA. */
  readonly cert: string;
  /** The serving certificate's private key (PKCS#8). */
  readonly key: string;
}

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const DAY_MS = 86_400_000;
const FILES = { caCert: 'ca.crt', caKey: 'ca.key', cert: 'apiserver.crt', key: 'apiserver.key' } as const;

function pem(label: string, der: ArrayBuffer): string {
  const base64 = Buffer.from(der)
    .toString('base64')
    .replace(/(.{64})/g, '$1\n');
  return `-----BEGIN ${label}-----\n${base64.trimEnd()}\n-----END ${label}-----\n`;
}

function derOf(text: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(text.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64'));
}

function serial(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return Buffer.from(bytes).toString('hex');
}

/** Whether a serving certificate is signed by `ca`, covers every host and stays valid for a day. */
function usable(certPem: string, caPem: string, hosts: readonly string[], nowMs: number): boolean {
  try {
    const cert = new X509Certificate(certPem);
    const ca = new X509Certificate(caPem);
    if (!cert.verify(ca.publicKey) || Date.parse(cert.validTo) < nowMs + DAY_MS) return false;
    return hosts.every((host) => (isIP(host) ? cert.checkIP(host) : cert.checkHost(host)) !== undefined);
  } catch {
    return false;
  }
}

async function generate(
  hosts: readonly string[],
  nowMs: number,
  existingCa?: { cert: string; key: string },
): Promise<TlsMaterial & { caKey: string }> {
  // @peculiar/x509's dependency-injection container needs the Reflect metadata API.
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  x509.cryptoProvider.set(globalThis.crypto);
  const subtle = globalThis.crypto.subtle;
  const notBefore = new Date(nowMs - 3_600_000);
  let caCert: InstanceType<typeof x509.X509Certificate>;
  let caKeys: CryptoKeyPair;
  if (existingCa === undefined) {
    caKeys = (await subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
    caCert = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: serial(),
      name: 'CN=converge-ca',
      notBefore,
      notAfter: new Date(nowMs + 3650 * DAY_MS),
      signingAlgorithm: ALGORITHM,
      keys: caKeys,
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
          true,
        ),
        await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
      ],
    });
  } else {
    caCert = new x509.X509Certificate(existingCa.cert);
    const privateKey = await subtle.importKey('pkcs8', derOf(existingCa.key), ALGORITHM, true, ['sign']);
    caKeys = { privateKey, publicKey: await caCert.publicKey.export(ALGORITHM, ['verify']) };
  }
  const keys = (await subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
  const names = hosts.map((host) =>
    isIP(host) ? { type: 'ip' as const, value: host } : { type: 'dns' as const, value: host },
  );
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: 'CN=converge-apiserver',
    issuer: caCert.subject,
    notBefore,
    notAfter: new Date(nowMs + 365 * DAY_MS),
    signingAlgorithm: ALGORITHM,
    publicKey: keys.publicKey,
    signingKey: caKeys.privateKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
        true,
      ),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(names),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  });
  return {
    ca: caCert.toString('pem'),
    caKey: existingCa?.key ?? pem('PRIVATE KEY', await subtle.exportKey('pkcs8', caKeys.privateKey)),
    cert: cert.toString('pem'),
    key: pem('PRIVATE KEY', await subtle.exportKey('pkcs8', keys.privateKey)),
  };
}

/** Whether a CA certificate can still sign (valid for more than a day). */
function caStillValid(caPem: string, nowMs: number): boolean {
  try {
    return Date.parse(new X509Certificate(caPem).validTo) > nowMs + DAY_MS;
  } catch {
    return false;
  }
}

function readIfPresent(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The server's CA and serving certificate (ECDSA P-256) for `hosts` (always 127.0.0.1, ::1 and
 * localhost besides the bind host). With `dir` they are kept there (`ca.crt`, `ca.key`,
 * `apiserver.crt`, `apiserver.key`, mode 0600 in a 0700 directory, tightened with a warning when
 * found looser) and reused on restart, so kubeconfigs stay valid; a serving certificate that no
 * longer fits (hosts, expiry) is reissued from the same CA.
 */
export async function loadOrCreateTls(
  dir: string | undefined,
  hosts: readonly string[],
  nowMs: number,
  logger: Logger,
): Promise<TlsMaterial> {
  const all = [
    ...new Set([
      '127.0.0.1',
      '::1',
      'localhost',
      ...hosts.filter((h) => h !== '' && h !== '0.0.0.0' && h !== '::'),
    ]),
  ];
  try {
    if (dir === undefined) return await generate(all, nowMs);
    ensurePrivateDir(dir, logger);
    for (const name of Object.values(FILES)) ensurePrivateFile(join(dir, name), logger);
    const read = (name: string): string | undefined => readIfPresent(join(dir, name));
    const ca = read(FILES.caCert);
    const caKey = read(FILES.caKey);
    const cert = read(FILES.cert);
    const key = read(FILES.key);
    if (
      ca !== undefined &&
      caKey !== undefined &&
      cert !== undefined &&
      key !== undefined &&
      usable(cert, ca, all, nowMs)
    ) {
      return { ca, cert, key };
    }
    const reuseCa = ca !== undefined && caKey !== undefined && caStillValid(ca, nowMs);
    const material = await generate(all, nowMs, reuseCa ? { cert: ca, key: caKey } : undefined);
    writePrivateFile(join(dir, FILES.caCert), material.ca);
    writePrivateFile(join(dir, FILES.caKey), material.caKey);
    writePrivateFile(join(dir, FILES.cert), material.cert);
    writePrivateFile(join(dir, FILES.key), material.key);
    return { ca: material.ca, cert: material.cert, key: material.key };
  } catch (cause) {
    throw new ApiServerStartError(
      ApiServerErrorCodes.TLS_FAILED,
      `cannot prepare the TLS certificates: ${(cause as Error).message}`,
      { cause },
    );
  }
}
