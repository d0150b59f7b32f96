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

/** The object as the store keeps it (not as a version serves it). */
async function stored(name: string): Promise<Record<string, unknown>> {
  const type = server.server.store.types().find((t) => t.group === '' && t.kind === 'Event');
  if (type === undefined) throw new Error('no core/v1 Event store type');
  return (await server.server.store.get(type, { namespace: 'default', name })) as unknown as Record<
    string,
    unknown
  >;
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

  it('serve eventTime: null, the deprecated fields and regarding of an Event recorded through core/v1 as Go encodes them', async () => {
    const core = await server.request('/api/v1/namespaces/default/events', {
      method: 'POST',
      body: {
        metadata: { name: 'core-recorded' },
        involvedObject: { kind: 'Pod', namespace: 'default', name: 'web' },
        reason: 'Pulled',
        message: 'pulled',
        type: 'Normal',
        count: 2,
        firstTimestamp: '2026-11-26T10:00:00Z',
        lastTimestamp: '2026-11-26T10:05:00Z',
        source: { component: 'kubelet' },
      },
    });
    expect(core.status, core.text).toBe(201);
    const { metadata: _m, ...served } = (await server.request(`${EVENTS}/core-recorded`)).json as Record<
      string,
      unknown
    >;
    expect(served).toEqual({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      eventTime: null,
      reason: 'Pulled',
      type: 'Normal',
      regarding: { kind: 'Pod', namespace: 'default', name: 'web' },
      note: 'pulled',
      deprecatedSource: { component: 'kubelet' },
      deprecatedFirstTimestamp: '2026-11-26T10:00:00Z',
      deprecatedLastTimestamp: '2026-11-26T10:05:00Z',
      deprecatedCount: 2,
    });
    const list = (await server.request(`${EVENTS}?fieldSelector=metadata.name%3Dcore-recorded`)).json as {
      items: Record<string, unknown>[];
    };
    expect(list.items[0]).toHaveProperty('eventTime', null);
    // the text itself, not only its parse: `"eventTime":null` is written
    expect((await server.request(`${EVENTS}/core-recorded`)).text).toContain('"eventTime":null');
  });

  it('serve deprecatedFirstTimestamp and deprecatedLastTimestamp as null and deprecatedSource as {} for an Event created through events.k8s.io/v1, in reads and watches', async () => {
    const rv = ((await server.request(EVENTS)).json as { metadata: { resourceVersion: string } }).metadata
      .resourceVersion;
    const watch = await server.watch(`${EVENTS}?watch=true&resourceVersion=${rv}`);
    const created = await server.request(EVENTS, { method: 'POST', body: event('fresh') });
    expect(created.status, created.text).toBe(201);
    const expected = {
      eventTime: '2026-11-26T10:00:00.000000Z',
      deprecatedFirstTimestamp: null,
      deprecatedLastTimestamp: null,
      deprecatedSource: {},
    };
    expect(created.json).toMatchObject(expected);
    expect(created.json).not.toHaveProperty('deprecatedCount');
    expect((await server.request(`${EVENTS}/fresh`)).json).toMatchObject(expected);
    await watch.waitFor(1);
    expect(watch.events[0]).toMatchObject({ type: 'ADDED', object: expected });
    watch.abort();
    // the core/v1 view writes its own zero values; the store keeps none of them
    const core = (await server.request('/api/v1/namespaces/default/events/fresh')).json as Record<
      string,
      unknown
    >;
    expect(core).toMatchObject({ firstTimestamp: null, lastTimestamp: null, source: {} });
    expect(Object.keys(await stored('fresh'))).not.toContain('firstTimestamp');
  });

  it('accept an update that sends back what was read (nulls, {}) or leaves those fields out: unset equals the zero value', async () => {
    await server.request('/api/v1/namespaces/default/events', {
      method: 'POST',
      body: {
        metadata: { name: 'round-trip' },
        involvedObject: { kind: 'Pod', namespace: 'default', name: 'web' },
        reason: 'Pulled',
        type: 'Normal',
      },
    });
    const read = (await server.request(`${EVENTS}/round-trip`)).json as Record<string, unknown>;
    expect(read.eventTime).toBeNull();
    const put = await server.request(`${EVENTS}/round-trip`, {
      method: 'PUT',
      body: { ...read, metadata: { ...(read.metadata as object), labels: { touched: 'yes' } } },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.json).toMatchObject({ eventTime: null, metadata: { labels: { touched: 'yes' } } });
    const {
      eventTime: _t,
      deprecatedSource: _s,
      deprecatedFirstTimestamp: _f,
      ...bare
    } = put.json as Record<string, unknown>;
    const again = await server.request(`${EVENTS}/round-trip`, { method: 'PUT', body: bare });
    expect(again.status, again.text).toBe(200);
    expect(Object.keys(await stored('round-trip'))).not.toContain('eventTime');
  });
});
