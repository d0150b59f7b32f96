/**
 * Webhooks under `converge dev`: the operator modules' registered webhooks are served on
 * 127.0.0.1 with a generated certificate, and the embedded API server is configured to call them
 * (webhook configurations labelled as converge dev's, CRD conversions annotated as set by it).
 * Whatever a previous run left is replaced at start and removed on a clean stop, so a stopped dev
 * never leaves a `failurePolicy: Fail` webhook pointing at nothing.
 */
import {
  applyWebhookConfigurations,
  mutatingWebhookConfigurationType,
  removeWebhookConfigurations,
  validatingWebhookConfigurationType,
  WebhookServer,
  type WebhookServerAddress,
  webhookConfigurations,
} from '@converge/kube';
import {
  type Backend,
  type CustomResourceDefinition,
  customResourceDefinitionType,
  isConflict,
  isNotFound,
  type Logger,
  type WebhookHost,
  type WebhookRegistration,
  whenAborted,
} from '@converge/runtime';
import { describeError } from './errors.ts';

/** The name of both webhook configurations `converge dev` writes. */
export const DEV_WEBHOOKS_NAME = 'converge-dev-webhooks';
/** The label marking them (`app.kubernetes.io/managed-by=converge-dev`). */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'converge-dev';
/** The annotation marking a CRD whose `spec.conversion` converge dev set. */
export const CONVERSION_ANNOTATION = 'converge.dev/conversion-set-by';

/** The server `converge dev` serves webhooks with: 127.0.0.1, a free port, a generated certificate. */
export function devWebhookServer(logger: Logger): WebhookServer {
  return new WebhookServer({
    host: '127.0.0.1',
    port: 0,
    tls: { generate: { hosts: ['127.0.0.1', 'localhost'] } },
    logger,
  });
}

/** Sets (or, with `conversion` undefined, resets to `None`) a CRD's conversion and the annotation saying who did. */
async function markConversion(backend: Backend, crd: CustomResourceDefinition, set: boolean): Promise<void> {
  const annotations = { ...crd.metadata.annotations };
  if (set) annotations[CONVERSION_ANNOTATION] = MANAGED_BY;
  else delete annotations[CONVERSION_ANNOTATION];
  await backend.update(customResourceDefinitionType, {
    ...crd,
    metadata: { ...crd.metadata, annotations },
    ...(set ? {} : { spec: { ...crd.spec, conversion: { strategy: 'None' } } }),
  });
}

/** Re-reads and marks a CRD, retrying conflicts (a controller may write the CRD's status meanwhile). */
async function withCrd(backend: Backend, name: string, set: boolean): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      const crd = await backend.get<CustomResourceDefinition>(customResourceDefinitionType, {
        namespace: '',
        name,
      });
      await markConversion(backend, crd, set);
      return;
    } catch (error) {
      if (isNotFound(error)) return;
      if (!isConflict(error) || attempt >= 5) throw error;
    }
  }
}

/**
 * Removes what a previous `converge dev` on this data directory left: its webhook configurations
 * (by label) and the conversions it set (by annotation, back to `None`).
 */
export async function removeStaleDevWebhooks(backend: Backend): Promise<void> {
  const labelSelector = `${MANAGED_BY_LABEL}=${MANAGED_BY}`;
  for (const type of [mutatingWebhookConfigurationType, validatingWebhookConfigurationType]) {
    for (const item of (await backend.list(type, { labelSelector })).items) {
      await backend
        .delete(type, { namespace: '', name: item.metadata.name ?? '' })
        .catch((error: unknown) => {
          if (!isNotFound(error)) throw error;
        });
    }
  }
  const crds = await backend.list<CustomResourceDefinition>(customResourceDefinitionType);
  for (const crd of crds.items) {
    if (crd.metadata.annotations?.[CONVERSION_ANNOTATION] === MANAGED_BY) {
      await withCrd(backend, crd.metadata.name ?? '', false);
    }
  }
}

/** One line naming what is served: `validating vwebsite-v1.example.com (/validate-…), …`. */
export function describeWebhooks(registrations: readonly WebhookRegistration[]): string {
  return registrations.map((r) => `${r.webhook} ${r.name} (${r.path})`).join(', ');
}

/** Where {@link DevWebhooks} prints. */
export interface DevWebhooksOutput {
  out(line: string): void;
  err(line: string): void;
}

/**
 * The webhooks of `converge dev`: a {@link WebhookHost} for the manager that binds only once
 * something is registered (no port opened for nothing), and the embedded API server configured to
 * call what it serves — both configurations named {@link DEV_WEBHOOKS_NAME} with the server's URL
 * and CA, and each converter's CRD conversion. Registrations completed after `activate()` (a
 * module registering late) are served and configured too, and the line naming what is served is
 * printed again.
 */
export class DevWebhooks {
  readonly host: WebhookHost;
  readonly #backend: Backend;
  readonly #server: WebhookServer;
  readonly #output: DevWebhooksOutput;
  readonly #registrations: () => readonly WebhookRegistration[];
  /** Applies run one after another. */
  #queue: Promise<void> = Promise.resolve();
  #active = false;
  #removed = false;
  #pending: Promise<void> | undefined;
  /** The last line printed, so an apply that changed nothing prints nothing. */
  #printed = '';
  /** What was set, to undo. */
  #configured = false;
  readonly #crds = new Set<string>();

  constructor(options: {
    readonly backend: Backend;
    readonly logger: Logger;
    readonly output: DevWebhooksOutput;
    /** The manager's registrations (`() => manager.webhooks`), read on every apply. */
    readonly registrations: () => readonly WebhookRegistration[];
  }) {
    this.#backend = options.backend;
    this.#output = options.output;
    this.#registrations = options.registrations;
    this.#server = devWebhookServer(options.logger);
    this.host = this.#host();
  }

  /** Resolves once the webhook server listens (it binds once something is registered). */
  listening(): Promise<WebhookServerAddress> {
    return this.#server.listening();
  }

  /** The webhook server's in-process dispatch for a call to `url` (see `WebhookServer.localDispatcher`). */
  localDispatcher(
    url: URL,
    caPem: string | undefined,
    serverName: string | undefined,
  ): ReturnType<WebhookServer['localDispatcher']> {
    return this.#server.localDispatcher(url, caPem, serverName);
  }

  /** The generated CA (PEM), once serving. */
  get caBundle(): string | undefined {
    return this.#server.caBundle;
  }

  /** Configures what is registered now (resolves once done) and, from now on, what is registered later. */
  activate(): Promise<void> {
    this.#active = true;
    return this.#schedule();
  }

  /**
   * Removes the configurations and resets the conversions this run set (after any apply in
   * flight); nothing is configured afterwards. Call it before the webhook server stops.
   */
  async remove(): Promise<void> {
    this.#removed = true;
    // An apply in flight finishes first (it waits for the server at most until it stops listening).
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.#queue, new Promise((resolve) => (timer = setTimeout(resolve, 5_000)))]);
    clearTimeout(timer);
    if (this.#configured) await removeWebhookConfigurations(this.#backend, DEV_WEBHOOKS_NAME);
    for (const crd of this.#crds) await withCrd(this.#backend, crd, false);
  }

  #schedule(): Promise<void> {
    // Handlers added together (one complete()) make one apply.
    if (this.#pending !== undefined) return this.#pending;
    const next = this.#queue.then(() => {
      this.#pending = undefined;
      return this.#apply();
    });
    this.#pending = next;
    this.#queue = next.catch((error: unknown) => {
      this.#output.err(`converge: webhooks not registered: ${describeError(error)}`);
    });
    return next;
  }

  async #apply(): Promise<void> {
    const registrations = this.#registrations();
    if (this.#removed || registrations.length === 0) return;
    const { url } = await this.#server.listening();
    if (this.#removed) return;
    const made = webhookConfigurations(registrations, { url }, this.#server.caBundle ?? '', {
      name: DEV_WEBHOOKS_NAME,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY },
    });
    this.#configured = true;
    const applied = await applyWebhookConfigurations(this.#backend, made);
    for (const [crd, outcome] of Object.entries(applied.conversions)) {
      if (outcome === 'missing') {
        this.#output.err(
          `converge: WARNING: the CRD ${crd} does not exist: its conversion webhook is served but never called`,
        );
        continue;
      }
      this.#crds.add(crd);
      await withCrd(this.#backend, crd, true);
    }
    const line = `converge: serving webhooks at ${url}: ${describeWebhooks(registrations)}`;
    if (line !== this.#printed) this.#output.out(line);
    this.#printed = line;
  }

  /** The manager's host: starts the server once something is registered, configures late registrations. */
  #host(): WebhookHost {
    const server = this.#server;
    let signal: AbortSignal | undefined;
    let serving: Promise<void> | undefined;
    let fail: (error: unknown) => void = () => {};
    const failed = new Promise<never>((_, reject) => {
      fail = reject;
    });
    failed.catch(() => {});
    const added = (): void => {
      if (signal !== undefined && serving === undefined && !signal.aborted) {
        serving = server.start(signal);
        serving.catch(fail);
      }
      // Only what is served gets configured (a registration after the stop is not).
      if (this.#active && serving !== undefined) void this.#schedule().catch(() => {});
    };
    return {
      needLeaderElection: false,
      start: async (s) => {
        signal = s;
        if (server.webhooks().length > 0) {
          serving = server.start(s);
          serving.catch(fail);
        }
        await Promise.race([whenAborted(s), failed]);
        await serving;
      },
      validating: (path, validator, options) => {
        server.validating(path, validator, options);
        added();
      },
      mutating: (path, defaulter, options) => {
        server.mutating(path, defaulter, options);
        added();
      },
      conversion: (path, converter) => {
        server.conversion(path, converter);
        added();
      },
    };
  }
}
