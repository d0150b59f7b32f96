import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestWatch } from './test-support.ts';

let t: TestServer;
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const NS = 'meta-ns';
const CM = `/api/v1/namespaces/${NS}/configmaps`;
const SECRETS = `/api/v1/namespaces/${NS}/secrets`;
const GADGETS = `/apis/example.com/v1/namespaces/${NS}/gadgets`;
const GADGETS_BETA = `/apis/example.com/v1beta1/namespaces/${NS}/gadgets`;
/** What client-go's metadata client and Converge's KubeBackend send for a metadata-only watch. */
const PARTIAL = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';
const PARTIAL_HEAD = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' };

type Event = TestWatch['events'][number];
type Obj = { apiVersion: string; kind: string; metadata: Record<string, unknown>; [field: string]: unknown };

function gadgetCrd(): Obj {
  const schema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gadgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'gadgets', kind: 'Gadget' },
      versions: [
        { name: 'v1', served: true, storage: true, schema },
        { name: 'v1beta1', served: true, storage: false, schema },
      ],
    },
  };
}

async function create(path: string, body: Record<string, unknown>): Promise<Obj> {
  const res = await t.request(path, { method: 'POST', body });
  expect(res.status, res.text).toBe(201);
  return res.json as Obj;
}

async function rvOf(path: string): Promise<string> {
  return ((await t.request(path)).json as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
}

/** Every object event of `watch` is exactly a PartialObjectMetadata of the object's metadata. */
function expectPartial(event: Event, type: string, full: Obj): void {
  expect(event.type).toBe(type);
  expect(event.object).toEqual({ ...PARTIAL_HEAD, metadata: full.metadata });
}

beforeAll(async () => {
  t = await startTestServer();
  await create('/api/v1/namespaces', { metadata: { name: NS } });
  await create(CRDS, gadgetCrd());
  // the CRD's kind is served once it is established
  for (let i = 0; i < 100 && (await t.request(GADGETS)).status !== 200; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
});
afterAll(async () => {
  await t.close();
});

describe('WATCH with Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1', () => {
  it('sends ADDED, MODIFIED and DELETED of a built-in kind as PartialObjectMetadata, never the body', async () => {
    const from = await rvOf(CM);
    const watch = await t.watch(`${CM}?watch=true&resourceVersion=${from}`, { headers: { accept: PARTIAL } });
    try {
      expect(watch.status).toBe(200);
      expect(watch.headers['content-type']).toBe('application/json');
      const created = await create(CM, {
        metadata: { name: 'w-1', labels: { app: 'web' } },
        data: { big: 'x'.repeat(4096) },
      });
      const patched = await t.request(`${CM}/w-1`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/merge-patch+json' },
        body: { data: { big: 'y' } },
      });
      expect(patched.status, patched.text).toBe(200);
      const deleted = await t.request(`${CM}/w-1`, { method: 'DELETE' });
      expect(deleted.status, deleted.text).toBe(200);
      await watch.waitFor(3);
      const [added, modified, gone] = watch.events as [Event, Event, Event];
      expectPartial(added, 'ADDED', created);
      expectPartial(modified, 'MODIFIED', patched.json as Obj);
      expect(gone.type).toBe('DELETED');
      expect(gone.object).toMatchObject(PARTIAL_HEAD);
      expect(Object.keys(gone.object).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
      expect((gone.object.metadata as { uid: string }).uid).toBe(created.metadata.uid);
    } finally {
      watch.abort();
    }
  });

  it('sends the initial events of a watch without resourceVersion as PartialObjectMetadata (Secrets)', async () => {
    const secret = await create(SECRETS, { metadata: { name: 's-1' }, stringData: { password: 'hunter2' } });
    const watch = await t.watch(`${SECRETS}?watch=true`, { headers: { accept: PARTIAL } });
    try {
      await watch.waitFor(1);
      const added = watch.events.find((e) => (e.object.metadata as { name?: string }).name === 's-1');
      expect(added).toBeDefined();
      expectPartial(added as Event, 'ADDED', secret);
      // managedFields name the keys (f:password); the values never travel
      expect(JSON.stringify(watch.events)).not.toContain('aHVudGVyMg==');
    } finally {
      watch.abort();
    }
  });

  it('sends bookmarks as PartialObjectMetadata, the initial-events-end one annotated', async () => {
    const watch = await t.watch(
      `${CM}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
      { headers: { accept: PARTIAL } },
    );
    try {
      let end: Event | undefined;
      for (let count = 1; end === undefined; count++) {
        await watch.waitFor(count);
        const event = watch.events[count - 1] as Event;
        if (event.type === 'BOOKMARK') end = event;
        else expect(event.object).toMatchObject(PARTIAL_HEAD);
      }
      expect(end.object).toEqual({
        ...PARTIAL_HEAD,
        metadata: {
          resourceVersion: expect.any(String),
          annotations: { 'k8s.io/initial-events-end': 'true' },
        },
      });
    } finally {
      watch.abort();
    }
  });

  it('sends a custom resource as PartialObjectMetadata, in the storage version and in another served version', async () => {
    for (const path of [GADGETS, GADGETS_BETA]) {
      const from = await rvOf(path);
      const watch = await t.watch(`${path}?watch=true&resourceVersion=${from}`, {
        headers: { accept: PARTIAL },
      });
      try {
        const name = path === GADGETS ? 'g-v1' : 'g-v1beta1';
        const version = path === GADGETS ? 'v1' : 'v1beta1';
        const created = await create(path, {
          apiVersion: `example.com/${version}`,
          kind: 'Gadget',
          metadata: { name },
          spec: { size: 3 },
        });
        await watch.waitFor(1);
        expectPartial(watch.events[0] as Event, 'ADDED', created);
      } finally {
        watch.abort();
      }
    }
  });

  it('applies a field selector (events leaving it are DELETED) and still sends only metadata', async () => {
    const from = await rvOf(CM);
    const watch = await t.watch(
      `${CM}?watch=true&resourceVersion=${from}&fieldSelector=metadata.name%3Dsel-1`,
      {
        headers: { accept: PARTIAL },
      },
    );
    try {
      await create(CM, { metadata: { name: 'sel-0' }, data: { a: '1' } });
      const selected = await create(CM, { metadata: { name: 'sel-1' }, data: { a: '1' } });
      await watch.waitFor(1);
      expect(watch.events).toHaveLength(1);
      expectPartial(watch.events[0] as Event, 'ADDED', selected);
    } finally {
      watch.abort();
    }
  });

  it('answers the same watch without the header with full objects', async () => {
    const from = await rvOf(CM);
    const watch = await t.watch(`${CM}?watch=true&resourceVersion=${from}`);
    try {
      const created = await create(CM, { metadata: { name: 'full-1' }, data: { a: '1' } });
      await watch.waitFor(1);
      expect(watch.events[0]?.object).toEqual(created);
    } finally {
      watch.abort();
    }
  });
});
