/**
 * `spec.conversion` checked on CRD writes as kube-apiserver 1.32 checks it (upstream's field paths
 * and messages), and malformed stanzas (fast-check) always answered with a 4xx Status.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../packages/apiserver/src/server/test-support.ts';
import { widgetCrd } from './support.ts';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const PREFIX = 'CustomResourceDefinition.apiextensions.k8s.io "widgets.example.com" is invalid: ';

let api: TestServer;

beforeAll(async () => {
  api = await startTestServer();
});
afterAll(() => api.close());

function crdWith(conversion: unknown): Record<string, unknown> {
  const crd = widgetCrd({});
  (crd.spec as Record<string, unknown>).conversion = conversion;
  return crd;
}

async function rejected(conversion: unknown): Promise<{ message: string; fields: string[] }> {
  const answer = await api.request(CRDS, { method: 'POST', body: crdWith(conversion) });
  expect(answer.status).toBe(422);
  const status = answer.json as { message: string; details: { causes: { field: string }[] } };
  expect(status.message.startsWith(PREFIX)).toBe(true);
  return { message: status.message.slice(PREFIX.length), fields: status.details.causes.map((c) => c.field) };
}

const webhook = (clientConfig: unknown, conversionReviewVersions: unknown = ['v1']) => ({
  strategy: 'Webhook',
  webhook: { clientConfig, conversionReviewVersions },
});

describe('spec.conversion on create', () => {
  it('strategy Webhook needs a client config and review versions', async () => {
    expect((await rejected({ strategy: 'Webhook' })).message).toBe(
      '[spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook, spec.conversion.conversionReviewVersions: Required value]',
    );
  });

  it('url xor service', async () => {
    const both = await rejected(
      webhook({ url: 'https://a.example.com', service: { namespace: 'n', name: 's' } }),
    );
    expect(both.message).toBe(
      'spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required',
    );
    expect((await rejected(webhook({}))).message).toBe(both.message);
  });

  it('url: https only, a host, no user information, query or fragment', async () => {
    expect((await rejected(webhook({ url: 'http://a.example.com/convert' }))).message).toBe(
      `spec.conversion.webhookClientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
    );
    expect((await rejected(webhook({ url: 'https:///convert' }))).message).toBe(
      'spec.conversion.webhookClientConfig.url: Invalid value: "": host must be specified; desired format: https://host[/path]',
    );
    expect((await rejected(webhook({ url: 'https://me:pw@a.example.com/c?x=1#top' }))).message).toBe(
      '[spec.conversion.webhookClientConfig.url: Invalid value: "me:pw": user information is not permitted in the URL, ' +
        'spec.conversion.webhookClientConfig.url: Invalid value: "top": fragments are not permitted in the URL, ' +
        'spec.conversion.webhookClientConfig.url: Invalid value: "x=1": query parameters are not permitted in the URL]',
    );
    expect((await rejected(webhook({ url: 'https://a b.example.com' }))).message).toBe(
      'spec.conversion.webhookClientConfig.url: Required value: url must be a valid URL: parse "https://a b.example.com": invalid character " " in host name; desired format: https://host[/path]',
    );
  });

  it('service: namespace and name (paths as upstream reports them), port, path segments', async () => {
    const missing = await rejected(webhook({ service: { name: 'hooks' } }));
    // kube-apiserver 1.32 swaps the two (kubernetes/kubernetes#141353)
    expect(missing.message).toBe('spec.conversion.webhookClientConfig.service.name: Required value');
    expect((await rejected(webhook({ service: { namespace: 'n', name: 's', port: 70000 } }))).message).toBe(
      'spec.conversion.webhookClientConfig.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive',
    );
    expect(
      (await rejected(webhook({ service: { namespace: 'n', name: 's', path: 'convert' } }))).message,
    ).toBe(
      `spec.conversion.webhookClientConfig.service.path: Invalid value: "convert": must start with a '/'`,
    );
    expect((await rejected(webhook({ service: { namespace: 'n', name: 's', path: '/a//b' } }))).message).toBe(
      'spec.conversion.webhookClientConfig.service.path: Invalid value: "/a//b": segment[1] may not be empty',
    );
    expect(
      (await rejected(webhook({ service: { namespace: 'n', name: 's', path: '/Convert' } }))).message,
    ).toMatch(
      /^spec\.conversion\.webhookClientConfig\.service\.path: Invalid value: "\/Convert": segment\[0\]: a lowercase RFC 1123 subdomain must consist of/,
    );
  });

  it('conversionReviewVersions must name a version this server speaks, once each', async () => {
    expect((await rejected(webhook({ url: 'https://a.example.com' }, ['v2']))).message).toBe(
      'spec.conversion.conversionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, v1beta1',
    );
    expect((await rejected(webhook({ url: 'https://a.example.com' }, ['v1', 'v1']))).message).toBe(
      'spec.conversion.conversionReviewVersions[1]: Invalid value: "v1": duplicate version',
    );
  });

  it('strategy None forbids a webhook; an unknown strategy is unsupported', async () => {
    expect(
      (
        await rejected({
          strategy: 'None',
          webhook: { clientConfig: { url: 'https://a' }, conversionReviewVersions: ['v1'] },
        })
      ).message,
    ).toBe(
      '[spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook, ' +
        'spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook]',
    );
    expect((await rejected({ strategy: 'Magic' })).message).toBe(
      'spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook"',
    );
  });

  it('a valid service stanza is stored with port 443', async () => {
    const created = await api.request(CRDS, {
      method: 'POST',
      body: crdWith(webhook({ service: { namespace: 'hooks', name: 'widgets', path: '/convert' } })),
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      spec: { conversion: { webhook: { clientConfig: { service: { port: 443, path: '/convert' } } } } },
    });
    expect((await api.request(`${CRDS}/widgets.example.com`, { method: 'DELETE' })).status).toBe(200);
  });
});

describe('malformed conversion stanzas', () => {
  const text = fc.oneof(
    fc.string(),
    fc.constantFrom(
      '',
      'https://a.example.com/c',
      'http://x',
      'https://',
      'https://u@h',
      '/p',
      '//',
      'v1',
      'v1beta1',
    ),
  );
  const anything = fc.oneof(
    text,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(text, { maxLength: 3 }),
  );
  const service = fc.record(
    {
      namespace: anything,
      name: anything,
      path: anything,
      port: fc.oneof(fc.integer({ min: -5, max: 70000 }), anything),
    },
    { requiredKeys: [] },
  );
  const clientConfig = fc.record(
    { url: anything, service: fc.oneof(service, anything), caBundle: fc.oneof(fc.base64String(), anything) },
    { requiredKeys: [] },
  );
  const stanza = fc.oneof(
    anything,
    fc.record(
      {
        strategy: fc.oneof(fc.constantFrom('None', 'Webhook'), anything),
        webhook: fc.oneof(
          fc.record(
            {
              clientConfig: fc.oneof(clientConfig, anything),
              conversionReviewVersions: fc.oneof(fc.array(text), anything),
            },
            { requiredKeys: [] },
          ),
          anything,
        ),
      },
      { requiredKeys: [] },
    ),
  );

  it('are answered with a 4xx Status or stored, never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(stanza, async (conversion) => {
        const answer = await api.request(CRDS, { method: 'POST', body: crdWith(conversion) });
        if (answer.status === 201) {
          expect((await api.request(`${CRDS}/widgets.example.com`, { method: 'DELETE' })).status).toBe(200);
          return;
        }
        expect(answer.status).toBeGreaterThanOrEqual(400);
        expect(answer.status).toBeLessThan(500);
        expect(answer.json).toMatchObject({ kind: 'Status', status: 'Failure', code: answer.status });
      }),
      { numRuns: 150 },
    );
    expect((await api.request('/healthz')).status).toBe(200);
  });
});
