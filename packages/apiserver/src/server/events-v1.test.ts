import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './test-support.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

const EVENTS = '/apis/events.k8s.io/v1/namespaces/default/events';

function event(name: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name },
    eventTime: '2026-11-26T10:00:00.000000Z',
    reportingController: 'example.com/operator',
    reportingInstance: 'operator-0',
    action: 'Reconcile',
    reason: 'Synced',
    type: 'Normal',
    regarding: { kind: 'ConfigMap', namespace: 'default', name: 'settings', apiVersion: 'v1' },
    note: 'synced',
    ...overrides,
  };
}

async function names(query: string): Promise<string[]> {
  const res = await server.request(`${EVENTS}?fieldSelector=${encodeURIComponent(query)}`);
  expect(res.status, res.text).toBe(200);
  return (res.json as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name).sort();
}

describe('events.k8s.io/v1 Events', () => {
  it('are validated on create as ValidateEventCreate does for events.k8s.io/v1', async () => {
    const bad = await server.request(EVENTS, {
      method: 'POST',
      body: event('bad', { eventTime: undefined, type: 'Info', reportingController: '', action: '' }),
    });
    expect(bad.status).toBe(422);
    const causes = (bad.json as { details: { causes: { field: string; message: string }[] } }).details.causes;
    expect(causes).toEqual(
      expect.arrayContaining([
        { reason: 'FieldValueRequired', field: 'eventTime', message: 'Required value' },
        { reason: 'FieldValueInvalid', field: 'type', message: 'Invalid value: "": has invalid value: Info' },
      ]),
    );
    const legacyNoTime = causes.map((c) => c.field);
    expect(legacyNoTime).not.toContain('reportingController'); // legacy rules without an eventTime
    const missing = await server.request(EVENTS, {
      method: 'POST',
      body: event('missing', { reportingController: '', action: '', reportingInstance: '' }),
    });
    expect(
      (missing.json as { details: { causes: { field: string }[] } }).details.causes.map((c) => c.field),
    ).toEqual([
      'reportingController',
      'reportingController',
      'reportingController',
      'reportingInstance',
      'action',
    ]);
    const deprecated = await server.request(EVENTS, {
      method: 'POST',
      body: event('old', { deprecatedCount: 3, deprecatedSource: { component: 'x' }, series: { count: 1 } }),
    });
    expect(
      (deprecated.json as { details: { causes: { field: string; message: string }[] } }).details.causes,
    ).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'series.count',
        message: 'Invalid value: "": should be at least 2',
      },
      { reason: 'FieldValueRequired', field: 'series.lastObservedTime', message: 'Required value' },
      { reason: 'FieldValueInvalid', field: 'count', message: 'Invalid value: "": needs to be unset' },
      { reason: 'FieldValueInvalid', field: 'source', message: 'Invalid value: "": needs to be unset' },
    ]);
  });

  it('reject changes to immutable fields on update', async () => {
    const created = await server.request(EVENTS, { method: 'POST', body: event('immutable') });
    expect(created.status, created.text).toBe(201);
    const res = await server.request(`${EVENTS}/immutable`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      raw: JSON.stringify({
        reason: 'Other',
        series: { count: 2, lastObservedTime: '2026-11-26T10:01:00.000000Z' },
      }),
    });
    expect(res.status).toBe(422);
    expect(
      (res.json as { details: { causes: { field: string; message: string }[] } }).details.causes,
    ).toEqual([
      { reason: 'FieldValueInvalid', field: 'reason', message: 'Invalid value: "Other": field is immutable' },
    ]);
    const series = await server.request(`${EVENTS}/immutable`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      raw: JSON.stringify({ series: { count: 2, lastObservedTime: '2026-11-26T10:01:00.000000Z' } }),
    });
    expect(series.status, series.text).toBe(200);
  });

  it('support the field selectors of upstream’s field-label conversion', async () => {
    for (const [name, overrides] of [
      ['e1', {}],
      [
        'e2',
        { reason: 'Failed', type: 'Warning', regarding: { kind: 'Pod', namespace: 'default', name: 'web' } },
      ],
      [
        'e3',
        { reportingController: 'kubelet', regarding: { kind: 'Pod', namespace: 'default', name: 'db' } },
      ],
    ] as const) {
      const res = await server.request(EVENTS, { method: 'POST', body: event(name, overrides) });
      expect(res.status, res.text).toBe(201);
    }
    expect(await names('reason=Failed')).toEqual(['e2']);
    expect(await names('type=Warning')).toEqual(['e2']);
    expect(await names('regarding.kind=Pod,regarding.name=db')).toEqual(['e3']);
    expect(await names('regarding.namespace=default,reason!=Failed,metadata.name!=immutable')).toEqual([
      'e1',
      'e3',
    ]);
    expect(await names('reportingController=kubelet')).toEqual(['e3']);
    expect(await names('source=kubelet')).toEqual(['e3']);
    const bad = await server.request(`${EVENTS}?fieldSelector=involvedObject.name%3Dweb`);
    expect([bad.status, (bad.json as { message: string }).message]).toEqual([
      400,
      'field label not supported: involvedObject.name',
    ]);
    // core/v1 keeps its own labels for the same objects
    const core = await server.request(
      '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dweb',
    );
    expect(
      (core.json as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name),
    ).toEqual(['e2']);
  });
});
