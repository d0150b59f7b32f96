import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AdmissionWebhookOptions,
  AlreadyStartedError,
  type Backend,
  type Clock,
  type Converter,
  customResourceDefinitionType,
  type Defaulter,
  isAlreadyExists,
  isNotFound,
  type KubeObject,
  type Logger,
  noopLogger,
  OptionsError,
  type ResourceType,
  realClock,
  type Secret,
  secretType,
  type Validator,
  type WebhookHost,
  type WebhookRegistration,
} from '@converge/runtime';
import { applyWebhookConfigurations } from './apply-configurations.ts';
import type { WebhookCertificates } from './certificates.ts';
import {
  mutatingWebhookConfigurationType,
  validatingWebhookConfigurationType,
  webhookConfigurations,
} from './configurations.ts';
import {
  certificatesOf,
  ensureSharedCertificates,
  secretOf,
  unusableBecause,
} from './managed-certificates.ts';
import type { WebhookServerOptions } from './options.ts';
import { WebhookServer, type WebhookServerAddress } from './webhook-server.ts';

/** The label on what managed mode writes (the Secret and both configurations). */
export const MANAGED_WEBHOOKS_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_WEBHOOKS_LABEL_VALUE = 'converge';

/**
 * Options of {@link ManagedWebhooks}.
 *
 * @example
 * const managed = new ManagedWebhooks({
 *   backend,
 *   registrations: () => manager.webhooks,
 *   service: { namespace: 'website-system', name: 'website-webhooks' },
 *   secret: 'website-webhook-certs',
 * });
 * const manager = new Manager({ backend, webhookServer: managed });
 */
export interface ManagedWebhooksOptions {
  /** Where the Secret, the configurations and the CRDs live (a `KubeBackend` on the cluster). */
  readonly backend: Backend;
  /** The registrations to configure, read at start and on every apply (`() => manager.webhooks`). */
  readonly registrations: readonly WebhookRegistration[] | (() => readonly WebhookRegistration[]);
  /** The Service in front of the replicas; the API server calls `https://NAME.NAMESPACE.svc:PORT`. Port default 443. */
  readonly service: { readonly namespace: string; readonly name: string; readonly port?: number };
  /** The Secret holding the shared CA and serving certificate, in the service's namespace. */
  readonly secret: string;
  /** Both configurations' name. Default: the service's name. */
  readonly configurationName?: string;
  /** The webhook server's options but `tls` (port default 9443: the Service's `targetPort`). */
  readonly server?: Omit<WebhookServerOptions, 'tls' | 'logger' | 'clock'>;
  /** How often the configurations are re-applied even without a change seen. Default 300 000. */
  readonly resyncIntervalMs?: number;
  /** First delay after a failed apply or watch, doubled up to 30 s. Default 500. */
  readonly retryDelayMs?: number;
  readonly logger?: Logger;
  readonly clock?: Clock;
}

type Route =
  | {
      readonly type: 'validating';
      readonly path: string;
      readonly handler: Validator<KubeObject>;
      readonly options?: AdmissionWebhookOptions;
    }
  | {
      readonly type: 'mutating';
      readonly path: string;
      readonly handler: Defaulter<KubeObject>;
      readonly options?: AdmissionWebhookOptions;
    }
  | { readonly type: 'conversion'; readonly path: string; readonly handler: Converter };

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function positive(field: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new OptionsError(field, value, 'a finite number > 0');
  }
  return value;
}

/**
 * Webhooks on a real cluster without cert-manager (kopf's managed mode): a {@link WebhookHost} to
 * give as `ManagerOptions.webhookServer`. At start it makes sure the Secret holds a CA and a
 * serving certificate for the Service (created if absent; every replica shares it: one that loses
 * the create race reads the winner's), serves the webhooks with it, and keeps the
 * Mutating/ValidatingWebhookConfiguration and each converter's CRD `spec.conversion` pointing at
 * the Service with the CA as `caBundle`: applied at start, re-applied when someone changes them (it
 * watches them) and every `resyncIntervalMs`. Runs on every replica (no leadership needed); all
 * write the same configurations, so they agree. Stopping leaves the configurations (the other
 * replicas still serve).
 */
export class ManagedWebhooks implements WebhookHost {
  readonly needLeaderElection = false;
  readonly #backend: Backend;
  readonly #registrations: () => readonly WebhookRegistration[];
  readonly #service: { readonly namespace: string; readonly name: string; readonly port: number };
  readonly #secret: string;
  readonly #name: string;
  readonly #server: Omit<WebhookServerOptions, 'tls' | 'logger' | 'clock'>;
  readonly #resyncIntervalMs: number;
  readonly #retryDelayMs: number;
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #routes: Route[] = [];
  #webhookServer: WebhookServer | undefined;
  readonly #created: Promise<WebhookServer>;
  #resolveCreated!: (server: WebhookServer) => void;
  #rejectCreated!: (error: unknown) => void;
  #caBundle: string | undefined;
  #certificates: WebhookCertificates | undefined;
  /** The private directory the serving pair is written to (the server reloads it from there). */
  #certDir: string | undefined;
  readonly #hosts: readonly string[];
  /** Whether the "the Secret holds another CA" warning was logged (once per change). */
  #warnedCa = false;
  /** CRDs of converters found missing (warned once each). */
  readonly #missing = new Set<string>();
  #wake: (() => void) | undefined;
  #dirty = true;
  #started = false;
  #applies = 0;

  constructor(options: ManagedWebhooksOptions) {
    if (typeof options !== 'object' || options === null)
      throw new OptionsError('options', options, 'an object');
    if (typeof options.backend?.get !== 'function')
      throw new OptionsError('backend', options.backend, 'a Backend');
    this.#backend = options.backend;
    const { registrations } = options;
    if (typeof registrations !== 'function' && !Array.isArray(registrations)) {
      throw new OptionsError(
        'registrations',
        registrations,
        'an array of registrations or a function returning one',
      );
    }
    this.#registrations = typeof registrations === 'function' ? registrations : () => registrations;
    const service = options.service;
    for (const field of ['namespace', 'name'] as const) {
      const value = service?.[field];
      if (typeof value !== 'string' || value.length > 63 || !DNS_LABEL.test(value)) {
        throw new OptionsError(`service.${field}`, value, 'a DNS label');
      }
    }
    const port = service.port ?? 443;
    if (!Number.isInteger(port) || port < 1 || port > 65_535) {
      throw new OptionsError('service.port', service.port, 'a port from 1 to 65535');
    }
    this.#service = { namespace: service.namespace, name: service.name, port };
    const { namespace, name } = this.#service;
    this.#hosts = [
      `${name}.${namespace}.svc`,
      `${name}.${namespace}.svc.cluster.local`,
      `${name}.${namespace}`,
      name,
    ];
    if (typeof options.secret !== 'string' || !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(options.secret)) {
      throw new OptionsError('secret', options.secret, 'a Secret name (a DNS subdomain)');
    }
    this.#secret = options.secret;
    this.#name = options.configurationName ?? service.name;
    this.#server = options.server ?? {};
    this.#resyncIntervalMs = positive('resyncIntervalMs', options.resyncIntervalMs, 300_000);
    this.#retryDelayMs = positive('retryDelayMs', options.retryDelayMs, 500);
    this.#logger = (options.logger ?? noopLogger).child({ component: 'managed-webhooks' });
    this.#clock = options.clock ?? realClock;
    this.#created = new Promise<WebhookServer>((resolve, reject) => {
      this.#resolveCreated = resolve;
      this.#rejectCreated = reject;
    });
    this.#created.catch(() => {});
  }

  validating(path: string, validator: Validator<KubeObject>, options?: AdmissionWebhookOptions): void {
    this.#route({
      type: 'validating',
      path,
      handler: validator,
      ...(options === undefined ? {} : { options }),
    });
  }

  mutating(path: string, defaulter: Defaulter<KubeObject>, options?: AdmissionWebhookOptions): void {
    this.#route({
      type: 'mutating',
      path,
      handler: defaulter,
      ...(options === undefined ? {} : { options }),
    });
  }

  conversion(path: string, converter: Converter): void {
    this.#route({ type: 'conversion', path, handler: converter });
  }

  /** The CA (PEM) the configurations carry, once started. */
  get caBundle(): string | undefined {
    return this.#caBundle;
  }

  /** How many times the configurations were applied (for tests and metrics). */
  get applies(): number {
    return this.#applies;
  }

  /** Resolves once serving (with the bound address); rejects if start failed. */
  async listening(): Promise<WebhookServerAddress> {
    return (await this.#created).listening();
  }

  /**
   * Makes sure of the certificate, serves, and keeps the configurations applied until `signal`
   * aborts. Rejects when the Secret cannot be read or written, or the server cannot start.
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new AlreadyStartedError('ManagedWebhooks');
    this.#started = true;
    let certificates: WebhookCertificates;
    let files: { certFile: string; keyFile: string };
    try {
      certificates = await this.#ensureCertificates(signal);
      this.#certDir = await mkdtemp(join(tmpdir(), 'converge-webhook-certs-'));
      files = await this.#writePair(certificates);
    } catch (error) {
      this.#rejectCreated(error);
      await this.#removeCertDir();
      throw error;
    }
    this.#caBundle = certificates.caCert;
    this.#certificates = certificates;
    // From files, so a renewed certificate (same CA) is served without a restart.
    const server = new WebhookServer({
      ...this.#server,
      tls: files,
      logger: this.#logger,
      clock: this.#clock,
    });
    for (const route of this.#routes) this.#serve(server, route);
    this.#webhookServer = server;
    this.#resolveCreated(server);
    const serving = server.start(signal);
    try {
      await server.listening();
    } catch (error) {
      await serving.catch(() => {});
      await this.#removeCertDir();
      throw error;
    }
    const watches = [
      this.#watch(secretType, `metadata.name=${this.#secret}`, signal, this.#service.namespace),
      this.#watch(mutatingWebhookConfigurationType, `metadata.name=${this.#name}`, signal),
      this.#watch(validatingWebhookConfigurationType, `metadata.name=${this.#name}`, signal),
      this.#watch(customResourceDefinitionType, undefined, signal),
    ];
    try {
      await Promise.all([serving, this.#applyLoop(signal), ...watches]);
    } finally {
      await serving.catch(() => {});
      await this.#removeCertDir();
    }
  }

  #ensureCertificates(signal: AbortSignal): Promise<WebhookCertificates> {
    return ensureSharedCertificates({
      backend: this.#backend,
      namespace: this.#service.namespace,
      name: this.#secret,
      hosts: this.#hosts,
      labels: { [MANAGED_WEBHOOKS_LABEL]: MANAGED_WEBHOOKS_LABEL_VALUE },
      logger: this.#logger,
      signal,
    });
  }

  /** Writes the serving pair (mode 0600, each file replaced whole by a rename). */
  async #writePair(certificates: WebhookCertificates): Promise<{ certFile: string; keyFile: string }> {
    const dir = this.#certDir as string;
    const certFile = join(dir, 'tls.crt');
    const keyFile = join(dir, 'tls.key');
    for (const [file, text] of [
      [keyFile, certificates.key],
      [certFile, certificates.cert],
    ] as const) {
      await writeFile(`${file}.tmp`, text, { mode: 0o600 });
      await rename(`${file}.tmp`, file);
    }
    return { certFile, keyFile };
  }

  async #removeCertDir(): Promise<void> {
    const dir = this.#certDir;
    this.#certDir = undefined;
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  }

  #route(route: Route): void {
    this.#routes.push(route);
    if (this.#webhookServer !== undefined) {
      this.#serve(this.#webhookServer, route);
      this.#trigger(); // a registration after start: configure it too
    }
  }

  #serve(server: WebhookServer, route: Route): void {
    if (route.type === 'validating') server.validating(route.path, route.handler, route.options);
    else if (route.type === 'mutating') server.mutating(route.path, route.handler, route.options);
    else server.conversion(route.path, route.handler);
  }

  #trigger(): void {
    this.#dirty = true;
    this.#wake?.();
  }

  async #applyLoop(signal: AbortSignal): Promise<void> {
    let failures = 0;
    while (!signal.aborted) {
      if (!this.#dirty) {
        const woken = new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
        await Promise.race([woken, this.#clock.sleep(this.#resyncIntervalMs, signal).catch(() => {})]);
        this.#wake = undefined;
        if (signal.aborted) return;
      }
      this.#dirty = false;
      try {
        // Renew before the serving certificate expires (under the same CA): the Secret changes,
        // and every replica, this one included, serves the new pair.
        if (
          this.#certificates !== undefined &&
          unusableBecause(this.#certificates, this.#hosts, Date.now())
        ) {
          await this.#ensureCertificates(signal);
        }
        if (!(await this.#secretAgrees(signal))) continue;
        const made = webhookConfigurations(
          this.#registrations(),
          { service: this.#service },
          this.#caBundle ?? '',
          { name: this.#name, labels: { [MANAGED_WEBHOOKS_LABEL]: MANAGED_WEBHOOKS_LABEL_VALUE } },
        );
        const applied = await applyWebhookConfigurations(this.#backend, made, { name: this.#name, signal });
        this.#applies++;
        failures = 0;
        const changed = [applied.mutating, applied.validating, ...Object.values(applied.conversions)].some(
          (o) => o !== 'unchanged' && o !== 'absent' && o !== 'missing',
        );
        if (changed)
          this.#logger.info({ configuration: this.#name, ...applied }, 'Applied webhook configurations');
        for (const [crd, outcome] of Object.entries(applied.conversions)) {
          if (outcome === 'missing' && !this.#missing.has(crd)) {
            this.#logger.warn(
              { crd },
              'The CRD of a registered converter does not exist; its conversion is not set',
            );
          }
          if (outcome === 'missing') this.#missing.add(crd);
          else this.#missing.delete(crd);
        }
      } catch (error) {
        if (signal.aborted) return;
        this.#dirty = true;
        const delay = Math.min(this.#retryDelayMs * 2 ** failures++, 30_000);
        this.#logger.error({ err: error, retryInMs: delay }, 'Cannot apply webhook configurations');
        await this.#clock.sleep(delay, signal).catch(() => {});
      }
    }
  }

  /**
   * Whether the Secret still holds the CA this replica serves with. A deleted Secret is created
   * again with this replica's certificates; one holding another CA (a replica started since
   * replaced it) wins: this replica stops configuring (so replicas never undo each other's
   * caBundle) and says to restart it.
   */
  async #secretAgrees(signal: AbortSignal): Promise<boolean> {
    const key = { namespace: this.#service.namespace, name: this.#secret };
    let secret: Secret;
    try {
      secret = await this.#backend.get<Secret>(secretType, key, { signal });
    } catch (error) {
      if (!isNotFound(error) || this.#certificates === undefined) throw error;
      try {
        await this.#backend.create(
          secretType,
          secretOf(key.namespace, key.name, this.#certificates, {
            [MANAGED_WEBHOOKS_LABEL]: MANAGED_WEBHOOKS_LABEL_VALUE,
          }),
          { signal },
        );
        this.#logger.info({ secret: `${key.namespace}/${key.name}` }, 'Recreated the deleted webhook Secret');
        return true;
      } catch (createError) {
        if (!isAlreadyExists(createError)) throw createError;
        this.#dirty = true; // another replica recreated it: compare with that one
        return false;
      }
    }
    const stored = certificatesOf(secret);
    if (stored !== undefined && stored.caCert === this.#caBundle) {
      this.#warnedCa = false;
      // A renewed serving certificate under our CA: serve it too.
      if (
        stored.cert !== this.#certificates?.cert &&
        unusableBecause(stored, this.#hosts, Date.now()) === undefined
      ) {
        if (this.#certDir !== undefined) await this.#writePair(stored);
        this.#certificates = stored;
        this.#logger.info(
          { secret: `${key.namespace}/${key.name}` },
          'Serving the renewed webhook certificate',
        );
      }
      return true;
    }
    if (!this.#warnedCa) {
      this.#warnedCa = true;
      this.#logger.warn(
        { secret: `${key.namespace}/${key.name}` },
        'The webhook Secret holds another CA than this replica serves with; not configuring webhooks until this replica restarts',
      );
    }
    return false;
  }

  /** Re-applies on every change of the watched objects; restarts the watch after a failure. */
  async #watch(
    type: ResourceType,
    fieldSelector: string | undefined,
    signal: AbortSignal,
    namespace?: string,
  ): Promise<void> {
    let failures = 0;
    while (!signal.aborted) {
      try {
        const events = this.#backend.watch(type, {
          ...(fieldSelector === undefined ? {} : { fieldSelector }),
          ...(namespace === undefined ? {} : { namespace }),
          signal,
        });
        for await (const event of events) {
          failures = 0;
          if (event.type === 'BOOKMARK') continue;
          if (
            type === customResourceDefinitionType &&
            !this.#conversionCrds().has(event.object.metadata.name ?? '')
          ) {
            continue;
          }
          this.#trigger();
        }
      } catch (error) {
        if (signal.aborted) return;
        this.#logger.debug({ err: error, kind: type.kind }, 'Webhook configuration watch failed; restarting');
      }
      if (signal.aborted) return;
      const delay = Math.min(this.#retryDelayMs * 2 ** failures++, 30_000);
      await this.#clock.sleep(delay, signal).catch(() => {});
      this.#trigger(); // what changed while not watching
    }
  }

  #conversionCrds(): Set<string> {
    return new Set(this.#registrations().flatMap((r) => (r.webhook === 'conversion' ? [r.name] : [])));
  }
}
