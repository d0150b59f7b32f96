/**
 * `matchPolicy` of admission webhooks over a multi-version CRD: under Equivalent (the default) a
 * rule naming v1 matches a v2 request, and the webhook sees the request as v1 (object converted
 * through the CRD's conversion webhook, `requestKind`/`requestResource` naming v2); a mutating
 * webhook's patch applies to the v1 object, converted back. Under Exact the rule does not match.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../packages/apiserver/src/server/test-support.ts';
import { allowing, configuration, startHttpsServer } from '../admission/support.ts';
import { type ConversionHooks, startConversionHooks, widgetCrd, widgetV2 } from './support.ts';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const VWC = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const MWC = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const V1 = '/apis/example.com/v1/namespaces/default/widgets';
const V2 = '/apis/example.com/v2/namespaces/default/widgets';

interface Seen {
  readonly path: string;
  readonly request: Record<string, unknown>;
}

let api: TestServer;
let conversion: ConversionHooks;
let admission: Awaited<ReturnType<typeof startHttpsServer>>;
const seen: Seen[] = [];

beforeAll(async () => {
  api = await startTestServer();
  conversion = await startConversionHooks();
  admission = await startHttpsServer((review, path) => {
    seen.push({ path, request: review.request });
    return path === '/mutate'
      ? allowing(review.request.uid, [{ op: 'replace', path: '/spec/size', value: 10 }])
      : allowing(review.request.uid);
  });
  const crd = widgetCrd({ url: `${conversion.url}/convert`, caBundle: conversion.caBundle });
  expect((await api.request(CRDS, { method: 'POST', body: crd })).status).toBe(201);
});

afterAll(async () => {
  await admission.close();
  await conversion.stop();
  await api.close();
});

beforeEach(async () => {
  for (const path of [VWC, MWC, V1]) expect((await api.request(path, { method: 'DELETE' })).status).toBe(200);
  seen.length = 0;
});

const v1Rule = {
  operations: ['CREATE', 'UPDATE'],
  apiGroups: ['example.com'],
  apiVersions: ['v1'],
  resources: ['widgets'],
};

async function install(
  path: string,
  kind: 'ValidatingWebhookConfiguration' | 'MutatingWebhookConfiguration',
  webhook: Record<string, unknown>,
) {
  const body = configuration(kind, 'widgets', {
    name: 'widgets.example.com',
    clientConfig: {
      url: `${admission.url}${kind.startsWith('V') ? '/validate' : '/mutate'}`,
      caBundle: admission.caBundle,
    },
    rules: [v1Rule],
    ...webhook,
  });
  expect((await api.request(path, { method: 'POST', body })).status).toBe(201);
}

describe('matchPolicy', () => {
  it('Equivalent (the default): a v1 rule sees a v2 create as v1, converted, with the request kind', async () => {
    await install(VWC, 'ValidatingWebhookConfiguration', {});
    expect((await api.request(V2, { method: 'POST', body: widgetV2('eq', 2, 'red') })).status).toBe(201);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.request).toMatchObject({
      kind: { group: 'example.com', version: 'v1', kind: 'Widget' },
      resource: { group: 'example.com', version: 'v1', resource: 'widgets' },
      requestKind: { group: 'example.com', version: 'v2', kind: 'Widget' },
      requestResource: { group: 'example.com', version: 'v2', resource: 'widgets' },
      object: { apiVersion: 'example.com/v1', spec: { size: 2, color: 'red' } },
      oldObject: null,
    });
  });

  it('Equivalent on update converts the old object too', async () => {
    await api.request(V2, { method: 'POST', body: widgetV2('up', 1, 'red') });
    await install(VWC, 'ValidatingWebhookConfiguration', { matchPolicy: 'Equivalent' });
    const patched = await api.request(`${V2}/up`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: { spec: { replicas: 4 } },
    });
    expect(patched.status).toBe(200);
    expect(seen[0]?.request).toMatchObject({
      operation: 'UPDATE',
      object: { apiVersion: 'example.com/v1', spec: { size: 4 } },
      oldObject: { apiVersion: 'example.com/v1', spec: { size: 1 } },
    });
  });

  it('Exact: a v1 rule does not see v2 requests, but sees v1 ones with kind = requestKind', async () => {
    await install(VWC, 'ValidatingWebhookConfiguration', { matchPolicy: 'Exact' });
    expect((await api.request(V2, { method: 'POST', body: widgetV2('ex', 1, 'red') })).status).toBe(201);
    expect(seen).toEqual([]);
    await api.request(`${V1}/ex`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: { spec: { size: 3 } },
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.request.requestKind).toEqual(seen[0]?.request.kind);
  });

  it("a mutating webhook's patch applies to the converted object and comes back in the request's version", async () => {
    await install(MWC, 'MutatingWebhookConfiguration', {});
    const created = await api.request(V2, { method: 'POST', body: widgetV2('mut', 1, 'red') });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      apiVersion: 'example.com/v2',
      spec: { replicas: 10, paint: { color: 'red' } },
    });
    expect(((await api.request(`${V1}/mut`)).json as { spec: unknown }).spec).toEqual({
      size: 10,
      color: 'red',
    });
    expect(seen[0]?.request.object).toMatchObject({ apiVersion: 'example.com/v1', spec: { size: 1 } });
  });

  it('a conversion failure while matching is a 500 Internal error', async () => {
    await install(VWC, 'ValidatingWebhookConfiguration', {});
    const failed = await api.request(V2, { method: 'POST', body: widgetV2('bad', 1, 'unconvertible') });
    expect(failed.status).toBe(500);
    expect(failed.json).toMatchObject({ reason: 'InternalError', code: 500 });
    expect((failed.json as { message: string }).message).toMatch(
      /^Internal error occurred: conversion webhook for example\.com\/v2, Kind=Widget failed: .*colour unconvertible has no v1 form/,
    );
    expect(seen).toEqual([]);
  });
});
