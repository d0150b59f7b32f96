import { X509Certificate } from 'node:crypto';
import {
  type Backend,
  isAlreadyExists,
  isConflict,
  isNotFound,
  type Logger,
  type Secret,
  secretType,
} from '@converge/runtime';
import { generateWebhookCertificates, type WebhookCertificates } from './certificates.ts';

/** The Secret's keys: cert-manager's layout (`tls.crt`, `tls.key`, `ca.crt`) plus the CA key to re-sign. */
export const SECRET_KEYS = { cert: 'tls.crt', key: 'tls.key', caCert: 'ca.crt', caKey: 'ca.key' } as const;

/** A serving certificate is replaced at start when it expires within this. */
const RENEW_BEFORE_MS = 30 * 86_400_000;
const ATTEMPTS = 5;

function decode(secret: Secret, key: string): string | undefined {
  const value = secret.data?.[key];
  return typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : undefined;
}

/** The certificates a Secret holds, or undefined when any is missing or unreadable. */
export function certificatesOf(secret: Secret): WebhookCertificates | undefined {
  const cert = decode(secret, SECRET_KEYS.cert);
  const key = decode(secret, SECRET_KEYS.key);
  const caCert = decode(secret, SECRET_KEYS.caCert);
  const caKey = decode(secret, SECRET_KEYS.caKey);
  if (cert === undefined || key === undefined || caCert === undefined || caKey === undefined)
    return undefined;
  return { cert, key, caCert, caKey };
}

/** Why `certificates` cannot serve `hosts` now, or undefined when they can. */
export function unusableBecause(
  certificates: WebhookCertificates,
  hosts: readonly string[],
  nowMs: number,
): string | undefined {
  let cert: X509Certificate;
  let ca: X509Certificate;
  try {
    cert = new X509Certificate(certificates.cert);
    ca = new X509Certificate(certificates.caCert);
  } catch {
    return 'a certificate is not PEM';
  }
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey))
    return 'the serving certificate is not signed by ca.crt';
  if (Date.parse(cert.validTo) - nowMs < RENEW_BEFORE_MS)
    return 'the serving certificate expires within 30 days';
  if (Date.parse(ca.validTo) - nowMs < RENEW_BEFORE_MS) return 'the CA expires within 30 days';
  const names = new Set((cert.subjectAltName ?? '').split(/,\s*/).map((n) => n.replace(/^DNS:/, '')));
  const missing = hosts.find((h) => !names.has(h));
  return missing === undefined ? undefined : `the serving certificate does not name ${missing}`;
}

/** The Secret holding `certificates`. */
export function secretOf(
  namespace: string,
  name: string,
  certificates: WebhookCertificates,
  labels: Readonly<Record<string, string>>,
): Secret {
  const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { namespace, name, labels: { ...labels } },
    type: 'kubernetes.io/tls',
    data: {
      [SECRET_KEYS.cert]: b64(certificates.cert),
      [SECRET_KEYS.key]: b64(certificates.key),
      [SECRET_KEYS.caCert]: b64(certificates.caCert),
      [SECRET_KEYS.caKey]: b64(certificates.caKey),
    },
  };
}

/**
 * The certificates every replica shares, from the Secret `namespace/name`: created when absent (a
 * replica that loses the create race reads the winner's), and replaced when unusable (missing keys,
 * expiring within 30 days, not naming `hosts`): a new serving certificate under the same CA when
 * the CA is still good, so `caBundle` does not change; else a new CA. A lost update race reads the
 * winner's.
 */
export async function ensureSharedCertificates(options: {
  readonly backend: Backend;
  readonly namespace: string;
  readonly name: string;
  readonly hosts: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
  readonly logger: Logger;
  readonly signal?: AbortSignal;
}): Promise<WebhookCertificates> {
  const { backend, namespace, name, hosts, labels, logger } = options;
  const io = options.signal === undefined ? {} : { signal: options.signal };
  for (let attempt = 1; ; attempt++) {
    let existing: Secret | undefined;
    try {
      existing = await backend.get<Secret>(secretType, { namespace, name }, io);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    const current = existing === undefined ? undefined : certificatesOf(existing);
    const problem =
      existing === undefined
        ? 'absent'
        : current === undefined
          ? 'a key is missing'
          : unusableBecause(current, hosts, Date.now());
    if (problem === undefined && current !== undefined) return current;
    // Keep the CA (and so every configuration's caBundle) when it is still good.
    const caGood =
      current !== undefined &&
      (() => {
        try {
          return Date.parse(new X509Certificate(current.caCert).validTo) - Date.now() > RENEW_BEFORE_MS;
        } catch {
          return false;
        }
      })();
    const fresh = await generateWebhookCertificates({
      hosts,
      ...(caGood && current !== undefined ? { ca: { cert: current.caCert, key: current.caKey } } : {}),
    });
    const desired = secretOf(namespace, name, fresh, labels);
    try {
      if (existing === undefined) await backend.create(secretType, desired, io);
      else {
        await backend.update(
          secretType,
          {
            ...desired,
            // A Secret's type cannot change: keep it.
            ...(existing.type === undefined ? {} : { type: existing.type }),
            metadata: {
              ...existing.metadata,
              labels: { ...existing.metadata.labels, ...labels },
            },
          },
          io,
        );
      }
      logger.info(
        { secret: `${namespace}/${name}`, reason: problem, newCa: !caGood },
        'Wrote the webhook serving certificate',
      );
      return fresh;
    } catch (error) {
      // Another replica won the race: read what it wrote.
      if (!(isAlreadyExists(error) || isConflict(error)) || attempt >= ATTEMPTS) throw error;
    }
  }
}
