import { isIP } from 'node:net';
import { WebhookTlsError } from './errors.ts';

/** A CA and a serving certificate it signed, all PEM; the keys are PKCS#8. */
export interface WebhookCertificates {
  /** The CA certificate: what goes (base64) into a webhook configuration's `caBundle`. */
  readonly caCert: string;
  /** The CA's private key, to sign a later serving certificate under the same `caBundle`. */
  readonly caKey: string;
  /** The serving certificate. */
  readonly cert: string;
  /** The serving certificate's private key. */
  readonly key: string;
}

export interface GenerateCertificatesOptions {
  /**
   * DNS names and IP addresses the serving certificate is valid for (subject alternative names; the
   * API server ignores the common name). For a Service: `NAME.NAMESPACE.svc`. Default `localhost`,
   * `127.0.0.1` and `::1`.
   */
  readonly hosts?: readonly string[];
  /** Sign with this CA instead of making a new one: the serving certificate rotates, the `caBundle` stays. */
  readonly ca?: { readonly cert: string; readonly key: string };
  /** How long the serving certificate is valid, in days. Default 365 (a new CA: 3650). */
  readonly validityDays?: number;
  /** Now, in ms since the epoch; certificates are valid from an hour before (clock skew). Default `Date.now()`. */
  readonly nowMs?: number;
}

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const DAY_MS = 86_400_000;
export const DEFAULT_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '::1'];

function pem(label: string, der: ArrayBuffer): string {
  const lines =
    Buffer.from(der)
      .toString('base64')
      .match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

function der(text: string): Uint8Array<ArrayBuffer> {
  const body = text.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
  return new Uint8Array(Buffer.from(body, 'base64'));
}

/** 16 random bytes, the first below 0x80 so the serial is positive (RFC 5280). */
function serialNumber(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x01;
  return Buffer.from(bytes).toString('hex');
}

async function loadX509() {
  // @peculiar/x509 resolves its ASN.1 parsers through tsyringe, which needs the Reflect metadata API.
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  x509.cryptoProvider.set(globalThis.crypto);
  return x509;
}

/**
 * Makes a serving certificate (ECDSA P-256, SHA-256, `serverAuth`) for `hosts`, signed by a new
 * self-signed CA or by `ca`, for development and tests: put `caCert` (base64) in the webhook
 * configuration's `caBundle`. In production use certificates from your PKI (cert-manager) and the
 * server's `certFile`/`keyFile`, which it reloads when they change.
 *
 * @example
 * const certs = await generateWebhookCertificates({ hosts: ['website-webhook.default.svc'] });
 * writeFileSync('tls.crt', certs.cert);
 * writeFileSync('tls.key', certs.key);
 * const caBundle = Buffer.from(certs.caCert).toString('base64');
 */
export async function generateWebhookCertificates(
  options: GenerateCertificatesOptions = {},
): Promise<WebhookCertificates> {
  const hosts = [...new Set(options.hosts ?? DEFAULT_HOSTS)];
  if (hosts.length === 0 || hosts.some((host) => typeof host !== 'string' || host === '')) {
    throw new WebhookTlsError('generating certificates needs at least one host, and no empty host');
  }
  const nowMs = options.nowMs ?? Date.now();
  const validityDays = options.validityDays ?? 365;
  try {
    const x509 = await loadX509();
    const subtle = globalThis.crypto.subtle;
    const notBefore = new Date(nowMs - 3_600_000);
    let caCert: InstanceType<typeof x509.X509Certificate>;
    let caKeys: CryptoKeyPair;
    if (options.ca === undefined) {
      caKeys = (await subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
      caCert = await x509.X509CertificateGenerator.createSelfSigned({
        serialNumber: serialNumber(),
        name: 'CN=converge-webhook-ca',
        notBefore,
        notAfter: new Date(nowMs + Math.max(validityDays, 3650) * DAY_MS),
        signingAlgorithm: ALGORITHM,
        keys: caKeys,
        extensions: [
          new x509.BasicConstraintsExtension(true, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
          await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
        ],
      });
    } else {
      caCert = new x509.X509Certificate(options.ca.cert);
      const privateKey = await subtle.importKey('pkcs8', der(options.ca.key), ALGORITHM, true, ['sign']);
      caKeys = { privateKey, publicKey: await caCert.publicKey.export(ALGORITHM, ['verify']) };
    }
    const keys = (await subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
    const names = hosts.map((host) => ({
      type: isIP(host) ? ('ip' as const) : ('dns' as const),
      value: host,
    }));
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: serialNumber(),
      subject: `CN=${hosts[0]?.replace(/[,+="\\<>;#]/g, '_')}`,
      issuer: caCert.subject,
      notBefore,
      notAfter: new Date(nowMs + validityDays * DAY_MS),
      signingAlgorithm: ALGORITHM,
      publicKey: keys.publicKey,
      signingKey: caKeys.privateKey,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension(names),
        await x509.AuthorityKeyIdentifierExtension.create(caCert),
      ],
    });
    return {
      caCert: caCert.toString('pem'),
      caKey: options.ca?.key ?? pem('PRIVATE KEY', await subtle.exportKey('pkcs8', caKeys.privateKey)),
      cert: cert.toString('pem'),
      key: pem('PRIVATE KEY', await subtle.exportKey('pkcs8', keys.privateKey)),
    };
  } catch (cause) {
    throw new WebhookTlsError(`cannot generate the webhook certificates: ${(cause as Error).message}`, {
      cause,
    });
  }
}
