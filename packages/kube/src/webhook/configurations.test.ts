import {
  allowed,
  type CustomResourceDefinition,
  customResourceDefinitionType,
  denied,
  type KubeObject,
  Manager,
  OptionsError,
  type ResourceType,
  resourceType,
  WebhookBuilder,
  WebhookRegistry,
} from '@converge/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedCluster, startEmbeddedCluster } from '../backend/test-harness.ts';
import { applyWebhookConfigurations, holds, removeWebhookConfigurations } from './apply-configurations.ts';
import { generateWebhookCertificates } from './certificates.ts';
import {
  mutatingWebhookConfigurationType,
  validatingWebhookConfigurationType,
  webhookConfigurations,
} from './configurations.ts';
import { WebhookServer } from './webhook-server.ts';

type Website = KubeObject & { spec: { domain: string; replicas?: number } };

const websiteType: ResourceType = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Website',
  plural: 'websites',
  namespaced: true,
});
const nodeType: ResourceType = resourceType({
  group: '',
  version: 'v1',
  kind: 'Node',
  plural: 'nodes',
  namespaced: false,
});

let caPem = '';
beforeAll(async () => {
  caPem = (await generateWebhookCertificates({ hosts: ['127.0.0.1'] })).caCert;
});

function registrations() {
  const registry = new WebhookRegistry();
  new WebhookBuilder(websiteType, registry)
    .withDefaulter({ default: () => undefined }, { reinvocationPolicy: 'IfNeeded' })
    .withValidator(
      { validate: () => allowed() },
      {
        operations: ['CREATE', 'UPDATE', 'DELETE'],
        matchConditions: [{ name: 'not-kube', expression: "request.userInfo.username != 'kube'" }],
        objectSelector: { matchLabels: { checked: 'yes' } },
      },
    )
    .withConverter({ convert: (o) => o })
    .complete();
  new WebhookBuilder(nodeType, registry)
    .withValidator({ validate: () => allowed() }, { failurePolicy: 'Ignore', timeoutSeconds: 3 })
    .complete();
  return registry.registrations;
}

describe('webhookConfigurations', () => {
  it('makes one configuration per webhook type with the rules, policies and a url clientConfig', () => {
    const { mutating, validating, conversions } = webhookConfigurations(
      registrations(),
      { url: 'https://127.0.0.1:9443/' },
      caPem,
      { name: 'website-webhooks', labels: { app: 'website' } },
    );
    const caBundle = Buffer.from(caPem).toString('base64');
    expect(mutating).toEqual({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'website-webhooks', labels: { app: 'website' } },
      webhooks: [
        {
          name: 'mwebsite-v1.example.com',
          clientConfig: { url: 'https://127.0.0.1:9443/mutate-example-com-v1-website', caBundle },
          rules: [
            {
              operations: ['CREATE', 'UPDATE'],
              apiGroups: ['example.com'],
              apiVersions: ['v1'],
              resources: ['websites'],
              scope: 'Namespaced',
            },
          ],
          failurePolicy: 'Fail',
          matchPolicy: 'Equivalent',
          namespaceSelector: {},
          objectSelector: {},
          sideEffects: 'None',
          timeoutSeconds: 10,
          admissionReviewVersions: ['v1'],
          reinvocationPolicy: 'IfNeeded',
        },
      ],
    });
    expect(validating?.kind).toBe('ValidatingWebhookConfiguration');
    const [site, node] = validating?.webhooks ?? [];
    expect(site).toMatchObject({
      name: 'vwebsite-v1.example.com',
      rules: [{ operations: ['CREATE', 'UPDATE', 'DELETE'] }],
      matchConditions: [{ name: 'not-kube', expression: "request.userInfo.username != 'kube'" }],
      objectSelector: { matchLabels: { checked: 'yes' } },
    });
    expect(site).not.toHaveProperty('reinvocationPolicy');
    expect(node).toMatchObject({
      name: 'vnode-v1.core.converge.dev',
      clientConfig: { url: 'https://127.0.0.1:9443/validate--v1-node' },
      rules: [{ apiGroups: [''], resources: ['nodes'], scope: 'Cluster' }],
      failurePolicy: 'Ignore',
      timeoutSeconds: 3,
    });
    expect(conversions).toEqual([
      {
        crd: 'websites.example.com',
        conversion: {
          strategy: 'Webhook',
          webhook: {
            clientConfig: { url: 'https://127.0.0.1:9443/convert', caBundle },
            conversionReviewVersions: ['v1'],
          },
        },
      },
    ]);
  });

  it('points at a Service (port 443 unless given) and takes the caBundle as PEM or base64', () => {
    const base64 = Buffer.from(caPem).toString('base64');
    const { validating, conversions } = webhookConfigurations(
      registrations(),
      { service: { namespace: 'website-system', name: 'webhooks' } },
      base64,
    );
    expect(validating?.metadata.name).toBe('converge-webhooks');
    expect(validating?.webhooks?.[0]?.clientConfig).toEqual({
      service: {
        namespace: 'website-system',
        name: 'webhooks',
        port: 443,
        path: '/validate-example-com-v1-website',
      },
      caBundle: base64,
    });
    expect(conversions[0]?.conversion.webhook?.clientConfig?.service?.path).toBe('/convert');
  });

  it('makes nothing for a webhook type without registrations', () => {
    const registry = new WebhookRegistry();
    new WebhookBuilder(websiteType, registry).withValidator({ validate: () => allowed() }).complete();
    const made = webhookConfigurations(registry.registrations, { url: 'https://h:1' }, caPem);
    expect(made.mutating).toBeUndefined();
    expect(made.conversions).toEqual([]);
  });

  it.each([
    [{ url: 'http://127.0.0.1:9443' }, 'target.url'],
    [{ url: 'https://h:1/?x=1' }, 'target.url'],
    [{ url: 'not a url' }, 'target.url'],
    [{ service: { namespace: 'Bad', name: 'x' } }, 'target.service.namespace'],
    [{ service: { namespace: 'a', name: 'x', port: 0 } }, 'target.service.port'],
    [{}, 'target'],
  ])('refuses the target %j', (target, field) => {
    expect(() => webhookConfigurations([], target as never, caPem)).toThrow(
      expect.objectContaining({ field }),
    );
  });

  it('refuses a caBundle that is neither PEM nor its base64, and a bad name', () => {
    expect(() => webhookConfigurations([], { url: 'https://h:1' }, 'aGVsbG8=')).toThrow(OptionsError);
    expect(() => webhookConfigurations([], { url: 'https://h:1' }, '')).toThrow(OptionsError);
    expect(() => webhookConfigurations([], { url: 'https://h:1' }, caPem, { name: 'Bad_Name' })).toThrow(
      OptionsError,
    );
  });

  it('holds: desired members in actual, arrays of equal length', () => {
    expect(holds({ a: 1, b: [{ c: 2 }] }, { a: 1, b: [{ c: 2, d: 3 }], e: 4 })).toBe(true);
    expect(holds({ b: [{ c: 2 }] }, { b: [{ c: 2 }, { c: 3 }] })).toBe(false);
    expect(holds({ a: {} }, { a: null })).toBe(false);
    expect(holds({ a: 1 }, undefined)).toBe(false);
  });
});

describe('applyWebhookConfigurations against the embedded API server', () => {
  let cluster: EmbeddedCluster;
  beforeAll(async () => {
    cluster = await startEmbeddedCluster({ types: [websiteType], namespaces: ['web'] });
  }, 30_000);
  afterAll(async () => {
    await cluster?.close();
  });

  it('makes the API server call the manager-served webhooks, is idempotent, and removes them', async () => {
    const server = new WebhookServer({ host: '127.0.0.1', port: 0, tls: { generate: {} } });
    const manager = new Manager({ webhookServer: server });
    manager
      .webhook<Website>(websiteType)
      .withDefaulter({
        default(site) {
          site.spec.replicas ??= 2;
        },
      })
      .withValidator({
        validate: ({ object }) =>
          object?.spec.domain.includes(' ')
            ? denied(`spec.domain ${JSON.stringify(object.spec.domain)} has a space`)
            : allowed(),
      })
      .complete();
    const stop = new AbortController();
    const running = manager.start(stop.signal);
    try {
      const { url } = await server.listening();
      const made = webhookConfigurations(manager.webhooks, { url }, server.caBundle ?? '', { name: 'site' });
      const { backend } = cluster;
      expect(await applyWebhookConfigurations(backend, made)).toEqual({
        mutating: 'created',
        validating: 'created',
        conversions: {},
      });
      expect(await applyWebhookConfigurations(backend, made)).toEqual({
        mutating: 'unchanged',
        validating: 'unchanged',
        conversions: {},
      });
      const bad = {
        apiVersion: 'example.com/v1',
        kind: 'Website',
        metadata: { name: 'bad', namespace: 'web' },
        spec: { domain: 'my blog' },
      };
      await expect(backend.create(websiteType, bad)).rejects.toThrow(
        'admission webhook "vwebsite-v1.example.com" denied the request: spec.domain "my blog" has a space',
      );
      const good = await backend.create<Website>(websiteType, {
        ...bad,
        metadata: { name: 'good', namespace: 'web' },
        spec: { domain: 'blog.example.com' },
      });
      expect(good.spec.replicas).toBe(2);
      // Someone edits the configuration: the next apply puts it back.
      const stored = await backend.get(validatingWebhookConfigurationType, { namespace: '', name: 'site' });
      await backend.update(validatingWebhookConfigurationType, { ...stored, webhooks: [] } as never);
      expect((await applyWebhookConfigurations(backend, made)).validating).toBe('updated');
      // Only a validator left: the mutating configuration goes.
      const onlyValidating = { ...made, mutating: undefined };
      expect((await applyWebhookConfigurations(backend, onlyValidating)).mutating).toBe('deleted');
      await removeWebhookConfigurations(backend, 'site');
      await expect(
        backend.get(validatingWebhookConfigurationType, { namespace: '', name: 'site' }),
      ).rejects.toThrow(/not found/);
      await expect(
        backend.get(mutatingWebhookConfigurationType, { namespace: '', name: 'site' }),
      ).rejects.toThrow(/not found/);
      await backend.create(websiteType, bad); // nothing calls the webhooks any more
    } finally {
      stop.abort();
      await running;
    }
  }, 30_000);

  it("sets and resets a CRD's conversion, and reports a CRD that does not exist", async () => {
    const registry = new WebhookRegistry();
    new WebhookBuilder(websiteType, registry).withConverter({ convert: (o) => o }).complete();
    new WebhookBuilder({ ...websiteType, group: 'missing.example.com' }, registry)
      .withConverter({ convert: (o) => o })
      .complete();
    const made = webhookConfigurations(registry.registrations, { url: 'https://127.0.0.1:1' }, caPem);
    const applied = await applyWebhookConfigurations(cluster.backend, made);
    expect(applied.conversions).toEqual({
      'websites.example.com': 'updated',
      'websites.missing.example.com': 'missing',
    });
    const crd = await cluster.backend.get<CustomResourceDefinition>(customResourceDefinitionType, {
      namespace: '',
      name: 'websites.example.com',
    });
    expect(crd.spec?.conversion).toMatchObject({
      strategy: 'Webhook',
      webhook: { conversionReviewVersions: ['v1'] },
    });
    expect(
      (await applyWebhookConfigurations(cluster.backend, made)).conversions['websites.example.com'],
    ).toBe('unchanged');
    await removeWebhookConfigurations(cluster.backend, 'converge-webhooks', ['websites.example.com']);
    const reset = await cluster.backend.get<CustomResourceDefinition>(customResourceDefinitionType, {
      namespace: '',
      name: 'websites.example.com',
    });
    expect(reset.spec?.conversion).toEqual({ strategy: 'None' });
  }, 30_000);
});
