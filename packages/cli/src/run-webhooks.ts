/**
 * Webhooks under `converge run`: served when a webhook flag is given, with controller-runtime's
 * defaults (port 9443, certificates `tls.crt` and `tls.key` in
 * `/tmp/k8s-webhook-server/serving-certs`, reloaded when they change), so the same cert-manager
 * Secret mount works. The webhook configurations are the cluster's (cert-manager's CA injector,
 * a Helm chart, or `webhookConfigurations()`).
 */
import { join } from 'node:path';
import { WebhookServer } from '@converge/kube';
import type { Logger, Manager } from '@converge/runtime';
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
}

/** The webhook server `converge run` serves with, when a webhook flag was given. */
export function runWebhookServer(args: RunWebhookArgs, logger: Logger): WebhookServer | undefined {
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
  const dir = args.webhookCertDir ?? DEFAULT_WEBHOOK_CERT_DIR;
  return {
    out: `converge: serving webhooks on port ${args.webhookPort ?? DEFAULT_WEBHOOK_PORT} (certificates from ${dir}): ${list}`,
  };
}
