/**
 * INTERIM, until `converge dev` registers an operator's webhooks itself: serves the website
 * example's handlers from the test process and registers them as dev will (same webhook names),
 * so the end-to-end tests can be written and run now. Removed once dev does it.
 */
import { WebhookServer } from '@converge/kube';
import { defaultWebsite, validateWebsite } from '../../examples/website/admission.ts';
import { websiteConverter } from '../../examples/website/conversion.ts';
import type { Dev } from './support.ts';
import { MUTATING_WEBHOOK, VALIDATING_WEBHOOK } from './support.ts';

export async function hostInTest(dev: Dev): Promise<() => Promise<void>> {
  const server = new WebhookServer({
    host: '127.0.0.1',
    port: 0,
    tls: { generate: { hosts: ['127.0.0.1'] } },
  });
  server.mutating('/mutate-examples-converge-dev-v1alpha1-website', defaultWebsite as never);
  server.validating('/validate-examples-converge-dev-v1alpha1-website', validateWebsite as never);
  server.conversion('/convert', websiteConverter);
  const stop = new AbortController();
  const started = server.start(stop.signal);
  started.catch(() => {});
  const { url } = await server.listening();
  const caBundle = Buffer.from(server.caBundle ?? '').toString('base64');
  const rules = [
    {
      operations: ['CREATE', 'UPDATE'],
      apiGroups: ['examples.converge.dev'],
      apiVersions: ['v1alpha1'],
      resources: ['websites'],
    },
  ];
  const webhook = (name: string, path: string) => ({
    name,
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    failurePolicy: 'Fail',
    clientConfig: { url: `${url}${path}`, caBundle },
    rules,
  });
  const configurations = [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'website' },
      webhooks: [webhook(MUTATING_WEBHOOK, '/mutate-examples-converge-dev-v1alpha1-website')],
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'website' },
      webhooks: [webhook(VALIDATING_WEBHOOK, '/validate-examples-converge-dev-v1alpha1-website')],
    },
  ];
  for (const c of configurations) await dev.ok(['apply', '-f', '-'], JSON.stringify(c));
  const clientConfig = [
    {
      op: 'replace',
      path: '/spec/conversion/webhook/clientConfig',
      value: { url: `${url}/convert`, caBundle },
    },
  ];
  await dev.ok([
    'patch',
    'crd',
    'websites.examples.converge.dev',
    '--type=json',
    '-p',
    JSON.stringify(clientConfig),
  ]);
  return async () => {
    stop.abort();
    await started;
  };
}
