/**
 * The webhook flags of `converge run` (`--webhook-port`, `--webhook-cert-dir`,
 * `--webhook-service`, `--webhook-secret`), parsed and checked without loading the webhook server:
 * argument parsing stays light for every command.
 */
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
