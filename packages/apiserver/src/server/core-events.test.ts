import type { KubeObject } from '@converge/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeProtobufObject } from '../protobuf/index.ts';
import { startTestServer, type TestServer } from './test-support.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

const CORE = '/api/v1/namespaces/default/events';
const EVENTS = '/apis/events.k8s.io/v1/namespaces/default/events';

type Json = Record<string, unknown>;

/** An Event recorded through events.k8s.io/v1, without the deprecated fields. */
function eventsV1(name: string): Json {
  return {
    metadata: { name },
    eventTime: '2026-11-26T10:00:00.000000Z',
    reportingController: 'example.com/operator',
    reportingInstance: 'operator-0',
    action: 'Reconcile',
    reason: 'Synced',
    type: 'Normal',
    regarding: { kind: 'ConfigMap', namespace: 'default', name: 'settings', apiVersion: 'v1' },
    note: 'synced',
  };
}

/** The object as the store keeps it (not as a version serves it). */
async function stored(name: string): Promise<Json> {
  const type = server.server.store.types().find((t) => t.group === '' && t.kind === 'Event');
  if (type === undefined) throw new Error('no core/v1 Event store type');
  return (await server.server.store.get<KubeObject>(type, { namespace: 'default', name })) as unknown as Json;
}

function withoutMetadata(object: unknown): Json {
  const { metadata: _m, ...rest } = object as Json;
  return rest;
}

/** The unset fields of core/v1 Event that Go's encoding/json writes all the same. */
const ZERO_VALUES = {
  firstTimestamp: null,
  lastTimestamp: null,
  source: {},
};

describe('core/v1 Events', () => {
  it('serve firstTimestamp and lastTimestamp as null and source as {} for an Event created through events.k8s.io/v1, in get, list and watch', async () => {
    const rv = ((await server.request(CORE)).json as { metadata: { resourceVersion: string } }).metadata
      .resourceVersion;
    const watch = await server.watch(`${CORE}?watch=true&resourceVersion=${rv}`);
    const created = await server.request(EVENTS, { method: 'POST', body: eventsV1('recorded-v1') });
    expect(created.status, created.text).toBe(201);
    const expected = {
      apiVersion: 'v1',
      kind: 'Event',
      involvedObject: { kind: 'ConfigMap', namespace: 'default', name: 'settings', apiVersion: 'v1' },
      reason: 'Synced',
      message: 'synced',
      ...ZERO_VALUES,
      type: 'Normal',
      eventTime: '2026-11-26T10:00:00.000000Z',
      action: 'Reconcile',
      reportingComponent: 'example.com/operator',
      reportingInstance: 'operator-0',
    };
    const got = await server.request(`${CORE}/recorded-v1`);
    expect(withoutMetadata(got.json)).toEqual(expected);
    // the text itself, not only its parse
    expect(got.text).toContain('"firstTimestamp":null');
    expect(got.text).toContain('"source":{}');
    const list = (await server.request(`${CORE}?fieldSelector=metadata.name%3Drecorded-v1`)).json as {
      items: Json[];
    };
    expect(list.items.map(withoutMetadata)).toEqual([expected]);
    await watch.waitFor(1);
    expect(watch.events[0]?.type).toBe('ADDED');
    expect(withoutMetadata(watch.events[0]?.object)).toEqual(expected);
    watch.abort();
  });

  it('serve eventTime as null, involvedObject and source as {} and reportingComponent and reportingInstance as "" for a bare Event recorded through core/v1, leaving out count 0 and empty omitempty strings', async () => {
    const created = await server.request(CORE, {
      method: 'POST',
      body: { metadata: { name: 'bare' }, reason: 'Pulled', message: '', count: 0 },
    });
    expect(created.status, created.text).toBe(201);
    const expected = {
      apiVersion: 'v1',
      kind: 'Event',
      reason: 'Pulled',
      eventTime: null,
      ...ZERO_VALUES,
      involvedObject: {},
      reportingComponent: '',
      reportingInstance: '',
    };
    expect(withoutMetadata(created.json)).toEqual(expected);
    expect(withoutMetadata((await server.request(`${CORE}/bare`)).json)).toEqual(expected);
  });

  it('accept an update that sends back what was read (nulls, {}, ""): stored as unset, and a no-op update keeps the resourceVersion', async () => {
    const created = await server.request(EVENTS, { method: 'POST', body: eventsV1('round-trip') });
    expect(created.status, created.text).toBe(201);
    const read = (await server.request(`${CORE}/round-trip`)).json as Json & {
      metadata: { resourceVersion: string };
    };
    expect(read).toMatchObject(ZERO_VALUES);
    const same = await server.request(`${CORE}/round-trip`, { method: 'PUT', body: read });
    expect(same.status, same.text).toBe(200);
    expect((same.json as typeof read).metadata.resourceVersion).toBe(read.metadata.resourceVersion);
    const labelled = await server.request(`${CORE}/round-trip`, {
      method: 'PUT',
      body: { ...read, metadata: { ...read.metadata, labels: { touched: 'yes' } } },
    });
    expect(labelled.status, labelled.text).toBe(200);
    expect(labelled.json).toMatchObject({ ...ZERO_VALUES, metadata: { labels: { touched: 'yes' } } });
    const kept = await stored('round-trip');
    for (const field of ['firstTimestamp', 'lastTimestamp', 'source'])
      expect(Object.keys(kept)).not.toContain(field);
    // the events.k8s.io/v1 view of it still passes its immutability checks when sent back
    const view = (await server.request(`${EVENTS}/round-trip`)).json as Json;
    const back = await server.request(`${EVENTS}/round-trip`, { method: 'PUT', body: view });
    expect(back.status, back.text).toBe(200);
  });

  it('accept "" for reportingComponent and reportingInstance and {} for source as unset on update of an Event recorded through core/v1', async () => {
    await server.request(CORE, {
      method: 'POST',
      body: {
        metadata: { name: 'legacy' },
        involvedObject: { kind: 'Pod', namespace: 'default', name: 'web' },
        reason: 'Pulled',
        type: 'Normal',
      },
    });
    const read = (await server.request(`${CORE}/legacy`)).json as Json;
    expect(read).toMatchObject({ eventTime: null, reportingComponent: '', reportingInstance: '' });
    const put = await server.request(`${CORE}/legacy`, {
      method: 'PUT',
      body: { ...read, metadata: { ...(read.metadata as Json), labels: { touched: 'yes' } } },
    });
    expect(put.status, put.text).toBe(200);
    const kept = await stored('legacy');
    for (const field of ['eventTime', 'firstTimestamp', 'source', 'reportingComponent', 'reportingInstance'])
      expect(Object.keys(kept)).not.toContain(field);
  });

  it('serve the same Event in protobuf, where unset times and empty strings are absent', async () => {
    const created = await server.request(EVENTS, { method: 'POST', body: eventsV1('in-protobuf') });
    expect(created.status, created.text).toBe(201);
    const res = await fetch(`${server.url}${CORE}/in-protobuf`, {
      headers: {
        accept: 'application/vnd.kubernetes.protobuf',
        ...(server.server.token === undefined ? {} : { authorization: `Bearer ${server.server.token}` }),
      },
    });
    expect(res.status).toBe(200);
    const { object } = decodeProtobufObject(new Uint8Array(await res.arrayBuffer()), {
      apiVersion: 'v1',
      kind: 'Event',
    });
    const decoded = object as Json;
    expect(decoded).not.toHaveProperty('firstTimestamp');
    expect(decoded).toMatchObject({
      eventTime: '2026-11-26T10:00:00.000000Z',
      reportingComponent: 'example.com/operator',
    });
    // sent back in JSON, it is the same Event
    const json = (await server.request(`${CORE}/in-protobuf`)).json as Json;
    const put = await server.request(`${CORE}/in-protobuf`, { method: 'PUT', body: decoded });
    expect(put.status, put.text).toBe(200);
    expect(withoutMetadata(put.json)).toEqual(withoutMetadata(json));
  });
});
