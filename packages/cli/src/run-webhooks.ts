/**
 * Webhooks under `converge run`: served when a webhook flag is given, with controller-runtime's
 * defaults (port 9443, certificates `tls.crt` and `tls.key` in
 * `/tmp/k8s-webhook-server/serving-certs`, reloaded when they change), so the same cert-manager
 * Secret mount works. The webhook configurations are the cluster's (cert-manager's CA injector,
 * a Helm chart, or `webhookConfigurations()`).
 */
import { join } from 'node:path';
import { ManagedWebhooks, WebhookServer } from '@converge/kube';
import type { Backend, Logger, Manager, WebhookHost } from '@converge/runtime';
import { describeWebhooks } from './dev-webhooks.ts';
import { quote, UsageError } from './errors.ts';

/** controller-runtime's default certificate directory. */
export const DEFAULT_WEBHOOK_CERT_DIR = '/tmp/k8s-webhook-server/serving-certs';
/** controller-runtime's default webhook port. */
export const DEFAULT_WEBHOOK_PORT = 9443;

/** `--webhook-port`: a port from 0 (a free one, logged) to 65535 (undefined when not given). */
export function webhookPortOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65_535)
    throw new UsageError('run', `--webhook-port must be a port number (0-65535), got ${quote(value)}`);
  return Number(value);
}

export interface RunWebhookArgs {
  readonly webhookPort: number | undefined;
  readonly webhookCertDir: string | undefined;
  /** `--webhook-service NAMESPACE/NAME[:PORT]`: managed mode behind this Service. */
  readonly webhookService:
    | { readonly namespace: string; readonly name: string; readonly port?: number }
    | undefined;
  /** `--webhook-secret NAME`: managed mode's Secret (default `<service name>-webhook-certs`). */
  readonly webhookSecret: string | undefined;
}

/** `--webhook-service NAMESPACE/NAME[:PORT]`, checked. */
export function webhookServiceOf(value: string | undefined): RunWebhookArgs['webhookService'] {
  if (value === undefined) return undefined;
  const match = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-a-z0-9]*[a-z0-9])?)(:(\d{1,5}))?$/.exec(value);
  const port = match?.[6] === undefined ? undefined : Number(match[6]);
  if (match === null || (port !== undefined && (port < 1 || port > 65_535)))
    throw new UsageError('run', `--webhook-service must be NAMESPACE/NAME[:PORT], got ${quote(value)}`);
  return { namespace: match[1] as string, name: match[3] as string, ...(port === undefined ? {} : { port }) };
}

/** The webhook flags of `converge run`, checked (a {@link UsageError} names the flag). */
export function webhookArgsOf(values: {
  readonly 'webhook-port'?: string | undefined;
  readonly 'webhook-cert-dir'?: string | undefined;
  readonly 'webhook-service'?: string | undefined;
  readonly 'webhook-secret'?: string | undefined;
}): RunWebhookArgs {
  const args: RunWebhookArgs = {
    webhookPort: webhookPortOf(values['webhook-port']),
    webhookCertDir: values['webhook-cert-dir'],
    webhookService: webhookServiceOf(values['webhook-service']),
    webhookSecret: values['webhook-secret'],
  };
  checkWebhookFlags(args);
  return args;
}

/** Checks the webhook flags go together: files or managed mode, not both. */
function checkWebhookFlags(args: RunWebhookArgs): void {
  if (args.webhookService !== undefined && args.webhookCertDir !== undefined)
    throw new UsageError(
      'run',
      '--webhook-service (managed certificates) and --webhook-cert-dir exclude each other',
    );
  if (args.webhookSecret !== undefined && args.webhookService === undefined)
    throw new UsageError('run', '--webhook-secret is only used with --webhook-service');
}

/**
 * Managed mode (`--webhook-service`): certificates in a Secret every replica shares, the webhook
 * configurations and CRD conversions kept pointing at the Service.
 */
export function runManagedWebhooks(
  args: RunWebhookArgs,
  backend: Backend,
  manager: () => Manager,
  logger: Logger,
): ManagedWebhooks | undefined {
  const service = args.webhookService;
  if (service === undefined) return undefined;
  return new ManagedWebhooks({
    backend,
    registrations: () => manager().webhooks,
    service,
    secret: args.webhookSecret ?? `${service.name}-webhook-certs`,
    server: { port: args.webhookPort ?? DEFAULT_WEBHOOK_PORT },
    logger,
  });
}

/** The webhook server `converge run` serves with, when a webhook flag was given. */
export function runWebhookServer(args: RunWebhookArgs, logger: Logger): WebhookHost | undefined {
  if (args.webhookPort === undefined && args.webhookCertDir === undefined) return undefined;
  const dir = args.webhookCertDir ?? DEFAULT_WEBHOOK_CERT_DIR;
  return new WebhookServer({
    port: args.webhookPort ?? DEFAULT_WEBHOOK_PORT,
    tls: { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') },
    logger,
  });
}

/** The line `converge run` prints about webhooks after wiring (undefined: none registered). */
export function runWebhooksLine(
  args: RunWebhookArgs,
  manager: Manager,
  served: boolean,
): { readonly out?: string; readonly err?: string } {
  if (manager.webhooks.length === 0) return {};
  const list = describeWebhooks(manager.webhooks);
  if (!served) {
    return {
      err: `converge: WARNING: webhooks registered but not served (give --webhook-port or --webhook-cert-dir): ${list}`,
    };
  }
  const port = args.webhookPort ?? DEFAULT_WEBHOOK_PORT;
  const service = args.webhookService;
  if (service !== undefined) {
    const secret = args.webhookSecret ?? `${service.name}-webhook-certs`;
    return {
      out: `converge: serving webhooks on port ${port} for service ${service.namespace}/${service.name} (certificates in secret ${secret}, configurations managed): ${list}`,
    };
  }
  const dir = args.webhookCertDir ?? DEFAULT_WEBHOOK_CERT_DIR;
  return {
    out: `converge: serving webhooks on port ${args.webhookPort ?? DEFAULT_WEBHOOK_PORT} (certificates from ${dir}): ${list}`,
  };
}
