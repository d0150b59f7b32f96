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
import { DEFAULT_WEBHOOK_CERT_DIR, DEFAULT_WEBHOOK_PORT, type RunWebhookArgs } from './webhook-args.ts';

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
