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

/** The name of both webhook configurations `converge dev` writes. */
export const DEV_WEBHOOKS_NAME = 'converge-dev-webhooks';
/** The label marking them (`app.kubernetes.io/managed-by=converge-dev`). */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'converge-dev';
/** The annotation marking a CRD whose `spec.conversion` converge dev set. */
export const CONVERSION_ANNOTATION = 'converge.dev/conversion-set-by';

/**
 * A {@link WebhookHost} over `server` that binds only when something was registered before it
 * starts: without webhooks it just waits for its signal, so no port is opened for nothing.
 * Registrations made after such a start are not served.
 */
export function webhookHostFor(server: WebhookServer): WebhookHost {
  return {
    needLeaderElection: false,
    start: (signal) => (server.webhooks().length === 0 ? whenAborted(signal) : server.start(signal)),
    validating: (path, validator, options) => server.validating(path, validator, options),
    mutating: (path, defaulter, options) => server.mutating(path, defaulter, options),
    conversion: (path, converter) => server.conversion(path, converter),
  };
}

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

/** What {@link registerDevWebhooks} set, to remove it again. */
export interface DevWebhooks {
  /** The line to print. */
  readonly line: string;
  /** Warnings (a converter whose CRD does not exist). */
  readonly warnings: readonly string[];
  remove(): Promise<void>;
}

/**
 * Once `server` listens, makes the embedded API server (`backend`, its store) call the registered
 * webhooks: both configurations named {@link DEV_WEBHOOKS_NAME} with the server's URL and CA, and
 * each converter's CRD conversion.
 */
export async function registerDevWebhooks(
  backend: Backend,
  server: WebhookServer,
  registrations: readonly WebhookRegistration[],
): Promise<DevWebhooks> {
  const { url } = await server.listening();
  const made = webhookConfigurations(registrations, { url }, server.caBundle ?? '', {
    name: DEV_WEBHOOKS_NAME,
    labels: { [MANAGED_BY_LABEL]: MANAGED_BY },
  });
  const applied = await applyWebhookConfigurations(backend, made);
  const warnings: string[] = [];
  const crds: string[] = [];
  for (const [crd, outcome] of Object.entries(applied.conversions)) {
    if (outcome === 'missing') {
      warnings.push(`the CRD ${crd} does not exist: its conversion webhook is served but never called`);
      continue;
    }
    crds.push(crd);
    await withCrd(backend, crd, true);
  }
  return {
    line: `serving webhooks at ${url}: ${describeWebhooks(registrations)}`,
    warnings,
    remove: async () => {
      await removeWebhookConfigurations(backend, DEV_WEBHOOKS_NAME);
      for (const crd of crds) await withCrd(backend, crd, false);
    },
  };
}
