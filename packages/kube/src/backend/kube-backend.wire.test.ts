import { ExpiredError, type WatchEvent } from '@converge/runtime';
import { VirtualClock } from '@converge/runtime/testing';
import { describe, expect, it } from 'vitest';
import { ResponseDecodeError, WatchLineTooLongError } from '../errors.ts';
import { configMaps } from './fault-test-support.ts';
import { cm, collect, fake, json, stream } from './wire-test-support.ts';

describe('KubeBackend on the wire', () => {
  it('lists with the selectors, limit, continue and resourceVersion given, and fills in apiVersion and kind on items', async () => {
    const { backend, requests } = await fake((_r, res) =>
      json(res, 200, {
        kind: 'ConfigMapList',
        apiVersion: 'v1',
        metadata: { resourceVersion: '7', continue: 'next', remainingItemCount: 3 },
        items: [cm('a', '5'), { ...cm('b', '6'), kind: 'ConfigMap', apiVersion: 'v1' }],
      }),
    );
    const list = await backend.list(configMaps, {
      namespace: 'ns',
      labelSelector: 'app=web',
      fieldSelector: 'metadata.name!=x',
      limit: 2,
      resourceVersion: '5',
      resourceVersionMatch: 'NotOlderThan',
    });
    expect(requests[0]?.url.pathname).toBe('/api/v1/namespaces/ns/configmaps');
    expect(Object.fromEntries(requests[0]?.url.searchParams ?? [])).toEqual({
      labelSelector: 'app=web',
      fieldSelector: 'metadata.name!=x',
      limit: '2',
      resourceVersion: '5',
      resourceVersionMatch: 'NotOlderThan',
    });
    expect(list).toEqual({
      items: [
        { apiVersion: 'v1', kind: 'ConfigMap', ...cm('a', '5') },
        { apiVersion: 'v1', kind: 'ConfigMap', ...cm('b', '6') },
      ],
      resourceVersion: '7',
      continue: 'next',
      remainingItemCount: 3,
    });
    await backend.list(configMaps);
    expect(requests[1]?.url.pathname, 'no namespace lists across namespaces').toBe('/api/v1/configmaps');
  });

  it('rejects a list response that is not a list with a ResponseDecodeError', async () => {
    const { backend } = await fake((_r, res) => json(res, 200, { metadata: {}, items: [7] }));
    await expect(backend.list(configMaps)).rejects.toBeInstanceOf(ResponseDecodeError);
  });

  it('watches with allowWatchBookmarks and a random timeoutSeconds in [300, 600) unless timeoutMs is given', async () => {
    const clock = new VirtualClock({ seed: 7 });
    const { backend, requests } = await fake((_r, res) => stream(res, []), { clock });
    for (let i = 0; i < 20; i++)
      await collect(
        backend.watch(configMaps, { namespace: 'ns', resourceVersion: '5', allowBookmarks: true }),
      );
    const timeouts = requests.map((r) => Number(r.url.searchParams.get('timeoutSeconds')));
    for (const t of timeouts) expect(t >= 300 && t < 600, String(t)).toBe(true);
    expect(new Set(timeouts).size, 'the timeout is random per watch').toBeGreaterThan(5);
    expect(Object.fromEntries(requests[0]?.url.searchParams ?? [])).toMatchObject({
      watch: 'true',
      resourceVersion: '5',
      allowWatchBookmarks: 'true',
    });
    await collect(backend.watch(configMaps, { timeoutMs: 1500, labelSelector: 'a=b' }));
    const last = requests.at(-1)?.url.searchParams;
    expect(last?.get('timeoutSeconds')).toBe('2');
    expect(last?.get('allowWatchBookmarks')).toBeNull();
    expect(last?.get('labelSelector')).toBe('a=b');
  });

  it('delivers bookmarks only when asked for, and ends with the typed error of an ERROR event', async () => {
    const { backend } = await fake((_r, res) =>
      stream(res, [
        { type: 'ADDED', object: cm('a', '5') },
        { type: 'BOOKMARK', object: { metadata: { resourceVersion: '6' } } },
        {
          type: 'ERROR',
          object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' },
        },
      ]),
    );
    const events: WatchEvent[] = [];
    const error = await (async () => {
      for await (const event of backend.watch(configMaps, {})) events.push(event);
    })().catch((e: unknown) => e);
    expect(events.map((e) => e.type)).toEqual(['ADDED']);
    expect(error).toBeInstanceOf(ExpiredError);
    const withBookmarks: WatchEvent[] = [];
    await (async () => {
      for await (const event of backend.watch(configMaps, { allowBookmarks: true }))
        withBookmarks.push(event);
    })().catch(() => {});
    expect(withBookmarks).toEqual([
      { type: 'ADDED', object: { apiVersion: 'v1', kind: 'ConfigMap', ...cm('a', '5') } },
      { type: 'BOOKMARK', resourceVersion: '6' },
    ]);
  });

  it('cuts managedFields out of each event before decoding when asked to omit them, and only then', async () => {
    const managedFields = [
      { manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:data': { 'k:{"a":"b"}': {} } } },
    ];
    const object = {
      metadata: { name: 'a', namespace: 'home', resourceVersion: '5', managedFields, uid: 'u' },
      data: { managedFields: 'kept' },
    };
    const { backend } = await fake((_r, res) => stream(res, [{ type: 'ADDED', object }]));
    const [omitted] = await collect(backend.watch(configMaps, { omitManagedFields: true }));
    expect(omitted).toEqual({
      type: 'ADDED',
      object: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'a', namespace: 'home', resourceVersion: '5', uid: 'u' },
        data: { managedFields: 'kept' },
      },
    });
    const [kept] = await collect(backend.watch(configMaps, {}));
    expect(kept?.type !== 'BOOKMARK' && kept?.object.metadata.managedFields).toEqual(managedFields);
  });

  it('ends a watch with WatchLineTooLongError when one event line exceeds maxWatchLineBytes', async () => {
    const { backend } = await fake(
      (_r, res) => stream(res, [{ type: 'ADDED', object: { metadata: { name: 'x'.repeat(5_000) } } }]),
      { maxWatchLineBytes: 1_024 },
    );
    await expect(collect(backend.watch(configMaps))).rejects.toBeInstanceOf(WatchLineTooLongError);
  });

  it('falls back to list + watch once when the server rejects sendInitialEvents, and remembers it', async () => {
    const { backend, requests } = await fake((r, res) => {
      const q = r.url.searchParams;
      if (q.get('sendInitialEvents') === 'true') {
        json(res, 422, {
          kind: 'Status',
          code: 422,
          reason: 'Invalid',
          message: 'sendInitialEvents is forbidden for watch',
        });
      } else if (q.get('watch') === 'true') {
        stream(res, [{ type: 'MODIFIED', object: cm('a', '9') }]);
      } else if (q.get('continue') === null) {
        json(res, 200, { metadata: { resourceVersion: '8', continue: 'p2' }, items: [cm('a', '5')] });
      } else {
        json(res, 200, { metadata: { resourceVersion: '8' }, items: [cm('b', '6')] });
      }
    });
    const events = await collect(backend.watch(configMaps, { sendInitialEvents: true }));
    expect(
      events.map((e) =>
        e.type === 'BOOKMARK'
          ? `BOOKMARK ${e.resourceVersion} ${e.initialEventsEnd}`
          : `${e.type} ${e.object.metadata.name}`,
      ),
    ).toEqual(['ADDED a', 'ADDED b', 'BOOKMARK 8 true', 'MODIFIED a']);
    expect(requests.at(-1)?.url.searchParams.get('resourceVersion')).toBe('8');
    const before = requests.length;
    await collect(backend.watch(configMaps, { sendInitialEvents: true }));
    expect(requests.slice(before).some((r) => r.url.searchParams.get('sendInitialEvents') === 'true')).toBe(
      false,
    );
    expect(backend.stats().watchListFallbacks).toBe(2);
  });

  it('asks for sendInitialEvents with resourceVersionMatch=NotOlderThan and bookmarks on the wire', async () => {
    const { backend, requests } = await fake((_r, res) =>
      stream(res, [
        { type: 'ADDED', object: cm('a', '5') },
        {
          type: 'BOOKMARK',
          object: {
            metadata: { resourceVersion: '6', annotations: { 'k8s.io/initial-events-end': 'true' } },
          },
        },
        { type: 'BOOKMARK', object: { metadata: { resourceVersion: '7' } } },
      ]),
    );
    const events = await collect(backend.watch(configMaps, { sendInitialEvents: true }));
    expect(Object.fromEntries(requests[0]?.url.searchParams ?? [])).toMatchObject({
      sendInitialEvents: 'true',
      resourceVersionMatch: 'NotOlderThan',
      allowWatchBookmarks: 'true',
    });
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'BOOKMARK']);
  });
});
