import { fnv1a64, matchesShard, shardSelectorFor } from '@converge/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './test-support.ts';

let t: TestServer;
const NS = 'shard-ns';
const CM = `/api/v1/namespaces/${NS}/configmaps`;
const GADGETS = `/apis/shard.example.com/v1/namespaces/${NS}/gadgets`;

interface Meta {
  name: string;
  namespace?: string;
  uid: string;
}
interface List {
  kind: string;
  metadata: { resourceVersion: string; continue?: string; shardInfo?: { selector: string } };
  items: { metadata: Meta }[];
}

const q = (selector: string): string => `shardSelector=${encodeURIComponent(selector)}`;
const hex = (v: bigint): string => `0x${v.toString(16).padStart(16, '0')}`;
/** Selects exactly the objects of namespace `ns`. */
const onlyNamespace = (ns: string): string =>
  `shardRange(object.metadata.namespace, '${hex(fnv1a64(ns))}', '${hex(fnv1a64(ns) + 1n)}')`;

async function list(path: string): Promise<List> {
  const res = await t.request(path);
  expect(res.status, res.text).toBe(200);
  return res.json as List;
}

beforeAll(async () => {
  t = await startTestServer();
  await t.request('/api/v1/namespaces', { method: 'POST', body: { metadata: { name: NS } } });
  for (let i = 0; i < 12; i++) {
    const res = await t.request(CM, { method: 'POST', body: { metadata: { name: `cm-${i}` } } });
    expect(res.status).toBe(201);
  }
  const crd = await t.request('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    method: 'POST',
    body: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.shard.example.com' },
      spec: {
        group: 'shard.example.com',
        scope: 'Namespaced',
        names: { plural: 'gadgets', kind: 'Gadget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    },
  });
  expect(crd.status).toBe(201);
  for (let i = 0; i < 6; i++) {
    const res = await t.request(GADGETS, {
      method: 'POST',
      body: { apiVersion: 'shard.example.com/v1', kind: 'Gadget', metadata: { name: `g-${i}` } },
    });
    expect(res.status, res.text).toBe(201);
  }
});
afterAll(async () => {
  await t.close();
});

describe('shardSelector (KEP-5866) on list', () => {
  it.each([
    ['a built-in kind', CM],
    ['a custom resource', GADGETS],
  ])('lists each shard of %s; the shards together list every object once', async (_, path) => {
    const all = (await list(path)).items;
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) {
      const selector = shardSelectorFor(i, 3);
      const shard = await list(`${path}?${q(selector)}`);
      expect(shard.metadata.shardInfo).toEqual({ selector });
      expect(shard.items.every((o) => matchesShard(o, selector))).toBe(true);
      expect(shard.items.map((o) => o.metadata.name)).toEqual(
        all.filter((o) => matchesShard(o, selector)).map((o) => o.metadata.name),
      );
      seen.push(...shard.items.map((o) => o.metadata.name));
    }
    expect(seen.sort()).toEqual(all.map((o) => o.metadata.name).sort());
  });

  it('echoes no shardInfo without a selector, and treats an empty parameter as none', async () => {
    const plain = await list(CM);
    expect(plain.metadata.shardInfo).toBeUndefined();
    const empty = await list(`${CM}?shardSelector=`);
    expect(empty.metadata.shardInfo).toBeUndefined();
    expect(empty.items).toHaveLength(plain.items.length);
  });

  it('serves a sharded list as protobuf and YAML too (shardInfo in YAML only: 1.32 ListMeta has no field)', async () => {
    const selector = shardSelectorFor(0, 2);
    const proto = await t.request(`${CM}?${q(selector)}`, {
      headers: { accept: 'application/vnd.kubernetes.protobuf' },
    });
    expect(proto.status).toBe(200);
    expect(proto.headers['content-type']).toBe('application/vnd.kubernetes.protobuf');
    const yaml = await t.request(`${CM}?${q(selector)}`, { headers: { accept: 'application/yaml' } });
    expect(yaml.status).toBe(200);
    expect(yaml.text).toContain('shardInfo:');
  });

  it('shards by namespace across all namespaces', async () => {
    await t.request('/api/v1/namespaces/default/configmaps', {
      method: 'POST',
      body: { metadata: { name: 'elsewhere' } },
    });
    const mine = await list(`/api/v1/configmaps?${q(onlyNamespace(NS))}`);
    expect(new Set(mine.items.map((o) => o.metadata.namespace))).toEqual(new Set([NS]));
    expect(mine.items).toHaveLength(12);
  });

  it('pages through one shard with limit and continue', async () => {
    const selector = shardSelectorFor(1, 2);
    const whole = await list(`${CM}?${q(selector)}`);
    const names: string[] = [];
    let page = await list(`${CM}?limit=2&${q(selector)}`);
    for (;;) {
      expect(page.items.length).toBeLessThanOrEqual(2);
      expect(page.metadata.resourceVersion).toBe(whole.metadata.resourceVersion);
      names.push(...page.items.map((o) => o.metadata.name));
      if (page.metadata.continue === undefined) break;
      page = await list(
        `${CM}?limit=2&${q(selector)}&continue=${encodeURIComponent(page.metadata.continue)}`,
      );
    }
    expect(names).toEqual(whole.items.map((o) => o.metadata.name));
  });

  it.each([
    [
      "shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')",
      'unsupported field path',
    ],
    ["shardRange(object.metadata.uid, '0x0', '0x8000000000000000')", 'did you mean'],
    ['app=web', 'unexpected character "=" at position 3'],
    ['  ', 'empty shard selector is not allowed'],
  ])('answers a malformed selector %j with a 400 BadRequest Status', async (selector, message) => {
    for (const path of [`${CM}?${q(selector)}`, `${GADGETS}?watch=true&${q(selector)}`]) {
      const res = await t.request(path);
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'BadRequest', code: 400 });
      const text = (res.json as { message: string }).message;
      expect(text).toMatch(/^invalid shard selector: /);
      expect(text).toContain(message);
    }
  });
});

describe('shardSelector (KEP-5866) on deletecollection', () => {
  it('deletes only the objects of the shard', async () => {
    const path = '/api/v1/namespaces/default/configmaps';
    for (let i = 0; i < 6; i++)
      await t.request(path, { method: 'POST', body: { metadata: { name: `dc-${i}` } } });
    const before = (await list(path)).items;
    const selector = shardSelectorFor(0, 2);
    const res = await t.request(`${path}?${q(selector)}`, { method: 'DELETE' });
    expect(res.status, res.text).toBe(200);
    const after = (await list(path)).items.map((o) => o.metadata.name);
    expect(after).toEqual(before.filter((o) => !matchesShard(o, selector)).map((o) => o.metadata.name));
  });
});

describe('shardSelector (KEP-5866) on watch', () => {
  it('sends the events of objects in the shard only', async () => {
    const { resourceVersion } = (await list('/api/v1/configmaps')).metadata;
    const w = await t.watch(
      `/api/v1/configmaps?watch=true&resourceVersion=${resourceVersion}&${q(onlyNamespace(NS))}`,
    );
    expect(w.status).toBe(200);
    await t.request('/api/v1/namespaces/default/configmaps', {
      method: 'POST',
      body: { metadata: { name: 'not-mine' } },
    });
    await t.request(CM, { method: 'POST', body: { metadata: { name: 'mine' } } });
    await t.request('/api/v1/namespaces/default/configmaps/not-mine', { method: 'DELETE' });
    await t.request(`${CM}/mine`, { method: 'DELETE' });
    await w.waitFor(2);
    expect(w.events.map((e) => [e.type, (e.object.metadata as Meta).name])).toEqual([
      ['ADDED', 'mine'],
      ['DELETED', 'mine'],
    ]);
    w.abort();
  });

  it('starts a watch-list with the ADDED events of its shard, then the initial-events-end bookmark', async () => {
    const selector = shardSelectorFor(0, 2);
    const expected = (await list(`${GADGETS}?${q(selector)}`)).items.map((o) => o.metadata.name);
    const w = await t.watch(
      `${GADGETS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&${q(selector)}`,
    );
    await w.waitFor(expected.length + 1);
    const added = w.events.slice(0, expected.length);
    expect(added.every((e) => e.type === 'ADDED')).toBe(true);
    expect(added.map((e) => (e.object.metadata as Meta).name)).toEqual(expected);
    expect(w.events[expected.length]?.type).toBe('BOOKMARK');
    w.abort();
  });
});
