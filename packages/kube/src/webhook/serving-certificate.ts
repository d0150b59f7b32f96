import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import type { Logger } from '@converge/runtime';
import { type GenerateCertificatesOptions, generateWebhookCertificates } from './certificates.ts';
import { WebhookTlsError } from './errors.ts';
import { messageOf } from './settle.ts';

/**
 * Where the webhook server's certificate comes from:
 * - `certFile` + `keyFile`: PEM files, reloaded when they change on disk (a mounted Secret updated
 *   by cert-manager); new connections get the new certificate, open ones keep theirs;
 * - `generate`: a new self-signed CA and a serving certificate for `generate.hosts`, made at start
 *   (development and tests); the CA is the server's `caBundle`;
 * - `cert` + `key` (+ `caCert`): PEM in memory, never reloaded.
 */
export type WebhookTlsOptions =
  | { readonly certFile: string; readonly keyFile: string }
  | { readonly generate: GenerateCertificatesOptions }
  | { readonly cert: string; readonly key: string; readonly caCert?: string };

/** A certificate and its key, checked to belong together. */
export interface CertificatePair {
  readonly cert: string;
  readonly key: string;
  /** The certificate's serial number (hex), for logs. */
  readonly serialNumber: string;
}

/**
 * Changes within this long of a file's modification time are looked for by content, not only by
 * stat: file timestamps come from a coarse clock, so two writes milliseconds apart can leave the
 * same mtime and size.
 */
const SETTLE_MS = 2_000;

/** Checks that `cert` is a PEM certificate, `key` its private key, and OpenSSL accepts them. */
export function checkPair(cert: string, key: string, where: string): CertificatePair {
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch (cause) {
    throw new WebhookTlsError(`${where}: the certificate is not a PEM certificate: ${messageOf(cause)}`, {
      cause,
    });
  }
  try {
    if (!certificate.checkPrivateKey(createPrivateKey(key))) {
      throw new Error('the key does not belong to the certificate');
    }
    createSecureContext({ cert, key });
  } catch (cause) {
    throw new WebhookTlsError(`${where}: unusable key: ${messageOf(cause)}`, { cause });
  }
  return { cert, key, serialNumber: certificate.serialNumber };
}

/**
 * A certificate and key read from files and read again when they change. `poll()` is cheap when
 * nothing changed (two `stat` calls); a changed pair is used only once both files load and belong
 * together, so a half-written or half-replaced pair never replaces a working one.
 */
export class CertificateFiles {
  readonly #certFile: string;
  readonly #keyFile: string;
  readonly #logger: Logger;
  #current: CertificatePair;
  #fingerprint = '';
  #newestChangeMs = 0;
  /** The fingerprint of files that failed to load: logged once, not again until they change. */
  #rejected: string | undefined;

  /** Loads the files (a {@link WebhookTlsError} when they are unusable). */
  constructor(certFile: string, keyFile: string, logger: Logger) {
    this.#certFile = certFile;
    this.#keyFile = keyFile;
    this.#logger = logger;
    this.#fingerprint = this.#stat();
    this.#current = this.#read();
  }

  get current(): CertificatePair {
    return this.#current;
  }

  #stat(): string {
    const parts: string[] = [];
    let newest = 0;
    for (const file of [this.#certFile, this.#keyFile]) {
      try {
        const stats = statSync(file, { bigint: true });
        newest = Math.max(newest, Number(stats.mtimeMs), Number(stats.ctimeMs));
        parts.push(`${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`);
      } catch (cause) {
        throw new WebhookTlsError(`cannot read ${file}: ${messageOf(cause)}`, { cause, file });
      }
    }
    this.#newestChangeMs = newest;
    return parts.join('|');
  }

  #read(): CertificatePair {
    const read = (file: string): string => {
      try {
        return readFileSync(file, 'utf8');
      } catch (cause) {
        throw new WebhookTlsError(`cannot read ${file}: ${messageOf(cause)}`, { cause, file });
      }
    };
    return checkPair(read(this.#certFile), read(this.#keyFile), `${this.#certFile} and ${this.#keyFile}`);
  }

  /**
   * Reads the files again if they may have changed (or, with `force`, in any case). Returns the new
   * pair when it differs from the current one and is usable; undefined otherwise (an unusable pair
   * is logged once, and the current pair stays).
   */
  poll(force = false): CertificatePair | undefined {
    let fingerprint: string | undefined;
    try {
      fingerprint = this.#stat();
      // Wall time on purpose: file times are wall time, whatever clock the server was given.
      const settling = Date.now() - this.#newestChangeMs < SETTLE_MS;
      const seen = fingerprint === this.#fingerprint || fingerprint === this.#rejected;
      if (seen && !settling && !force) return undefined;
      const next = this.#read();
      this.#fingerprint = fingerprint;
      this.#rejected = undefined;
      if (next.cert === this.#current.cert && next.key === this.#current.key) return undefined;
      this.#logger.info(
        { certFile: this.#certFile, serialNumber: next.serialNumber, previous: this.#current.serialNumber },
        'Loaded a new webhook certificate',
      );
      this.#current = next;
      return next;
    } catch (error) {
      const rejected = fingerprint ?? 'unreadable';
      if (this.#rejected !== rejected) {
        this.#logger.warn(
          {
            err: error,
            code: (error as WebhookTlsError).code,
            certFile: this.#certFile,
            keyFile: this.#keyFile,
          },
          'Cannot reload the webhook certificate; still serving the previous one',
        );
      }
      this.#rejected = rejected;
      return undefined;
    }
  }
}

/** The first pair to serve, the reloader when it comes from files, and the CA bundle when known. */
export interface ServingCertificate {
  readonly pair: CertificatePair;
  readonly files: CertificateFiles | undefined;
  readonly caBundle: string | undefined;
}

/** Loads or generates the serving certificate (a {@link WebhookTlsError} when it cannot). */
export async function loadServingCertificate(
  tls: WebhookTlsOptions,
  nowMs: number,
  logger: Logger,
): Promise<ServingCertificate> {
  if ('certFile' in tls) {
    const files = new CertificateFiles(tls.certFile, tls.keyFile, logger);
    return { pair: files.current, files, caBundle: undefined };
  }
  if ('generate' in tls) {
    const generated = await generateWebhookCertificates({ nowMs, ...tls.generate });
    return {
      pair: checkPair(generated.cert, generated.key, 'the generated certificate'),
      files: undefined,
      caBundle: generated.caCert,
    };
  }
  return { pair: checkPair(tls.cert, tls.key, 'options.tls'), files: undefined, caBundle: tls.caCert };
}
