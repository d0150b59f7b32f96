import {
  ExpiredError,
  Informer,
  NotFoundError,
  type PartialObjectMetadata,
  type WatchEvent,
} from '@converge/runtime';
import { describe, expect, it } from 'vitest';
import { METADATA_LIST_ACCEPT, METADATA_OBJECT_ACCEPT } from '../decode/index.ts';
import { ResponseDecodeError } from '../errors.ts';
import { configMaps } from './fault-test-support.ts';
import { collect, fake, json, stream } from './wire-test-support.ts';

const PARTIAL = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' };
const meta = (name: string, rv: string) => ({
  name,
  namespace: 'home',
  resourceVersion: rv,
  uid: `uid-${name}`,
  labels: { app: 'web' },
});
/** A ConfigMap as Converge hands it out metadata-only: the watched kind's apiVersion and kind. */
const projected = (name: string, rv: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: meta(name, rv),
});

describe('KubeBackend metadata-only reads on the wire', () => {
  it('lists with Accept as=PartialObjectMetadataList and hands out each item with the type’s apiVersion and kind', async () => {
    const { backend, requests } = await fake((_r, res) =>
      json(res, 200, {
        ...PARTIAL,
        kind: 'PartialObjectMetadataList',
        metadata: { resourceVersion: '9', continue: 'next', remainingItemCount: 4 },
        items: [
          { ...PARTIAL, metadata: meta('a', '5') },
          { ...PARTIAL, metadata: meta('b', '6') },
        ],
      }),
    );
    const list = await backend.list(configMaps, { namespace: 'ns', limit: 2, metadataOnly: true });
    expect(requests[0]?.headers.accept).toBe(METADATA_LIST_ACCEPT);
    expect(requests[0]?.headers.accept).toBe(
      'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json',
    );
    expect(Object.fromEntries(requests[0]?.url.searchParams ?? [])).toEqual({ limit: '2' });
    expect(list).toEqual({
      items: [projected('a', '5'), projected('b', '6')],
      resourceVersion: '9',
      continue: 'next',
      remainingItemCount: 4,
    });
    await backend.list(configMaps);
    expect(requests[1]?.headers.accept, 'a full list asks for plain JSON').toBe('application/json');
  });

  it('projects the full objects of a server that ignores as= (their bodies are dropped)', async () => {
    const { backend } = await fake((_r, res) =>
      json(res, 200, {
        kind: 'ConfigMapList',
        apiVersion: 'v1',
        metadata: { resourceVersion: '9' },
        items: [
          { metadata: meta('a', '5'), data: { big: 'x' } },
          { kind: 'ConfigMap', apiVersion: 'v1', metadata: meta('b', '6'), data: { big: 'y' } },
        ],
      }),
    );
    const list = await backend.list(configMaps, { metadataOnly: true });
    expect(list.items).toEqual([projected('a', '5'), projected('b', '6')]);
  });

  it('projects every item of a list large enough to be decoded item by item as it streams in', async () => {
    const items = Array.from({ length: 3000 }, (_, i) => ({
      ...PARTIAL,
      metadata: meta(`cm-${i}`, String(i + 1)),
    }));
    const { backend } = await fake((_r, res) =>
      json(res, 200, {
        kind: 'PartialObjectMetadataList',
        apiVersion: 'meta.k8s.io/v1',
        metadata: { resourceVersion: '9' },
        items: items.map((item) => ({
          ...item,
          metadata: { ...item.metadata, annotations: { pad: 'p'.repeat(400) } },
        })),
      }),
    );
    const list = await backend.list(configMaps, { metadataOnly: true });
    expect(list.items).toHaveLength(3000);
    expect(list.items[2999]).toMatchObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm-2999' },
    });
    expect(list.items.every((item) => Object.keys(item).length === 3)).toBe(true);
  });

  it('rejects a metadata-only list whose item is another kind, or has no metadata, with a ResponseDecodeError naming it', async () => {
    const answers = [
      {
        items: [
          { ...PARTIAL, metadata: meta('a', '5') },
          { kind: 'Secret', apiVersion: 'v1', metadata: meta('s', '6') },
        ],
        field: 'items[1].kind',
      },
      { items: [{ kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: {} }], field: 'items[0].kind' },
      {
        items: [{ ...PARTIAL, apiVersion: 'meta.k8s.io/v2', metadata: meta('a', '5') }],
        field: 'items[0].kind',
      },
      { items: [{ ...PARTIAL }], field: 'items[0].metadata' },
      { items: [{ ...PARTIAL, metadata: 'a' }], field: 'items[0].metadata' },
      { items: [7], field: 'items[0]' },
    ];
    for (const { items, field } of answers) {
      const { backend } = await fake((_r, res) =>
        json(res, 200, {
          kind: 'PartialObjectMetadataList',
          apiVersion: 'meta.k8s.io/v1',
          metadata: { resourceVersion: '9' },
          items,
        }),
      );
      const error = await backend.list(configMaps, { metadataOnly: true }).catch((e: unknown) => e);
      expect(error, field).toBeInstanceOf(ResponseDecodeError);
      expect((error as ResponseDecodeError).field).toBe(field);
      expect((error as ResponseDecodeError).code).toBe('CONVERGE_ERR_KUBE_RESPONSE_DECODE_FAILED');
    }
  });

  it('gets with Accept as=PartialObjectMetadata, from a server that honours it or not, and keeps typed errors', async () => {
    const answers: unknown[] = [
      { ...PARTIAL, metadata: meta('a', '5') },
      { kind: 'ConfigMap', apiVersion: 'v1', metadata: meta('a', '5'), data: { big: 'x' } },
    ];
    const { backend, requests } = await fake((r, res) => {
      if (r.url.pathname.endsWith('/missing')) {
        json(res, 404, {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'NotFound',
          code: 404,
          message: 'configmaps "missing" not found',
        });
        return;
      }
      if (r.url.pathname.endsWith('/broken')) {
        json(res, 200, { ...PARTIAL });
        return;
      }
      json(res, 200, answers[requests.length - 1]);
    });
    expect(await backend.get(configMaps, { namespace: 'home', name: 'a' }, { metadataOnly: true })).toEqual(
      projected('a', '5'),
    );
    expect(requests[0]?.headers.accept).toBe(METADATA_OBJECT_ACCEPT);
    expect(await backend.get(configMaps, { namespace: 'home', name: 'a' }, { metadataOnly: true })).toEqual(
      projected('a', '5'),
    );
    await expect(
      backend.get(configMaps, { namespace: 'home', name: 'missing' }, { metadataOnly: true }),
    ).rejects.toBeInstanceOf(NotFoundError);
    await expect(
      backend.get(configMaps, { namespace: 'home', name: 'broken' }, { metadataOnly: true }),
    ).rejects.toBeInstanceOf(ResponseDecodeError);
  });

  it('watches with Accept as=PartialObjectMetadata: objects projected, bookmarks read, ERROR events typed', async () => {
    const { backend, requests } = await fake((_r, res) =>
      stream(res, [
        { type: 'ADDED', object: { ...PARTIAL, metadata: meta('a', '5') } },
        {
          type: 'MODIFIED',
          object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: meta('a', '6'), data: { big: 'x' } },
        },
        { type: 'BOOKMARK', object: { ...PARTIAL, metadata: { resourceVersion: '7' } } },
        { type: 'DELETED', object: { ...PARTIAL, metadata: meta('a', '8') } },
        {
          type: 'ERROR',
          object: {
            kind: 'Status',
            apiVersion: 'v1',
            status: 'Failure',
            reason: 'Expired',
            code: 410,
            message: 'too old resource version',
          },
        },
      ]),
    );
    const events: WatchEvent[] = [];
    const error = await (async () => {
      for await (const event of backend.watch(configMaps, {
        resourceVersion: '4',
        allowBookmarks: true,
        metadataOnly: true,
      }))
        events.push(event);
    })().catch((e: unknown) => e);
    expect(requests[0]?.headers.accept).toBe(
      'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json',
    );
    expect(events).toEqual([
      { type: 'ADDED', object: projected('a', '5') },
      { type: 'MODIFIED', object: projected('a', '6') },
      { type: 'BOOKMARK', resourceVersion: '7' },
      { type: 'DELETED', object: projected('a', '8') },
    ]);
    expect(error).toBeInstanceOf(ExpiredError);
  });

  it('ends a metadata-only watch with a ResponseDecodeError on an event of another kind, after the events before it', async () => {
    const { backend } = await fake((_r, res) =>
      stream(res, [
        { type: 'ADDED', object: { ...PARTIAL, metadata: meta('a', '5') } },
        { type: 'ADDED', object: { kind: 'Secret', apiVersion: 'v1', metadata: meta('s', '6') } },
        { type: 'ADDED', object: { ...PARTIAL, metadata: meta('c', '7') } },
      ]),
    );
    const events: WatchEvent[] = [];
    const error = await (async () => {
      for await (const event of backend.watch(configMaps, { resourceVersion: '4', metadataOnly: true }))
        events.push(event);
    })().catch((e: unknown) => e);
    expect(events).toEqual([{ type: 'ADDED', object: projected('a', '5') }]);
    expect(error).toBeInstanceOf(ResponseDecodeError);
    expect((error as ResponseDecodeError).field).toBe('object.kind');
  });

  it('serves a metadata-only sendInitialEvents watch by metadata-only list + watch where the server rejects it', async () => {
    const { backend, requests } = await fake((r, res) => {
      if (r.url.searchParams.get('sendInitialEvents') === 'true') {
        json(res, 400, {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'BadRequest',
          code: 400,
          message: 'sendInitialEvents is forbidden',
        });
      } else if (r.url.searchParams.get('watch') === 'true') {
        stream(res, [{ type: 'ADDED', object: { ...PARTIAL, metadata: meta('b', '10') } }]);
      } else {
        json(res, 200, {
          kind: 'PartialObjectMetadataList',
          apiVersion: 'meta.k8s.io/v1',
          metadata: { resourceVersion: '9' },
          items: [{ ...PARTIAL, metadata: meta('a', '5') }],
        });
      }
    });
    const events = await collect(
      backend.watch(configMaps, { sendInitialEvents: true, allowBookmarks: true, metadataOnly: true }),
    );
    expect(events).toEqual([
      { type: 'ADDED', object: projected('a', '5') },
      { type: 'BOOKMARK', resourceVersion: '9', initialEventsEnd: true },
      { type: 'ADDED', object: projected('b', '10') },
    ]);
    expect(requests.map((r) => r.headers.accept)).toEqual([
      METADATA_OBJECT_ACCEPT,
      METADATA_LIST_ACCEPT,
      METADATA_OBJECT_ACCEPT,
    ]);
  });

  it('an informer over a malformed metadata-only answer reports a typed error, retries, and loses nothing', async () => {
    let lists = 0;
    let watches = 0;
    const { backend, requests } = await fake((r, res) => {
      if (r.url.searchParams.get('watch') === 'true') {
        watches++;
        if (watches === 1) {
          stream(res, [
            { type: 'ADDED', object: { ...PARTIAL, metadata: meta('b', '11') } },
            { type: 'ADDED', object: { kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: {} } },
          ]);
        } else {
          stream(res, [{ type: 'ADDED', object: { ...PARTIAL, metadata: meta('c', '12') } }], false);
        }
        return;
      }
      lists++;
      const items =
        lists === 1
          ? [{ ...PARTIAL, metadata: meta('a', '5') }, { ...PARTIAL }]
          : [{ ...PARTIAL, metadata: meta('a', '5') }];
      json(res, 200, {
        kind: 'PartialObjectMetadataList',
        apiVersion: 'meta.k8s.io/v1',
        metadata: { resourceVersion: '10' },
        items,
      });
    });
    const errors: unknown[] = [];
    const informer = new Informer<PartialObjectMetadata>({
      backend,
      type: configMaps,
      metadataOnly: true,
      initialList: 'paginated',
      backoff: { initialMs: 5, maxMs: 10 },
      onError: (error) => errors.push(error),
    });
    const stop = new AbortController();
    const run = informer.start(stop.signal);
    try {
      await informer.waitForSync(stop.signal);
      for (let i = 0; i < 500 && informer.cache.size < 3; i++) await new Promise((r) => setTimeout(r, 10));
      expect(
        informer.cache
          .list()
          .map((o) => o.metadata.name)
          .sort(),
      ).toEqual(['a', 'b', 'c']);
      for (const object of informer.cache.list())
        expect(Object.keys(object).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
      expect(errors.map((e) => (e as ResponseDecodeError).field)).toEqual([
        'items[1].metadata',
        'object.kind',
      ]);
      for (const error of errors) expect(error).toBeInstanceOf(ResponseDecodeError);
      const watchFrom = requests
        .filter((r) => r.url.searchParams.get('watch') === 'true')
        .map((r) => r.url.searchParams.get('resourceVersion'));
      expect(watchFrom.slice(0, 2), 'the second watch resumes after the last good event: no relist').toEqual([
        '10',
        '11',
      ]);
      expect(lists, 'one failed list, one good one').toBe(2);
    } finally {
      stop.abort();
      await run;
    }
  });
});
