import { describe, expect, it } from 'vitest';
import type { Backend } from '../backend/index.ts';
import { configMapType } from '../kinds/index.ts';
import type { KubeObject, ObjectKey } from '../object/index.ts';
import { ReferenceBackend } from '../testing/backend-suite/index.ts';
import { Client } from './client.ts';
import type { ObjectReader } from './pending-writes.ts';

/** A reader over the objects `holds` keeps (a replica's shard), and the backend's calls counted. */
async function setUp(partial: boolean, provide: 'promise' | 'reader' = 'promise') {
  const reference = new ReferenceBackend({ types: [configMapType] });
  for (const name of ['in-1', 'in-2', 'out-1', 'out-2']) {
    await reference.create(configMapType, { metadata: { namespace: 'default', name } });
  }
  const calls: string[] = [];
  const backend = new Proxy(reference, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (property === 'get' || property === 'list')
        return (...args: unknown[]) => {
          calls.push(property);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as Backend;
  const shard = new Map<string, KubeObject>();
  for (const object of (await reference.list(configMapType, {})).items) {
    if (object.metadata.name?.startsWith('in-')) shard.set(object.metadata.name, object);
  }
  const reader: ObjectReader = {
    get: (key: ObjectKey) => shard.get(key.name),
    list: () => [...shard.values()],
    resourceVersion: '1',
    ...(partial ? { partial: true } : {}),
  };
  // A provider may answer with the reader itself once it is synced (a manager's does).
  const client = new Client({
    backend,
    cache: provide === 'promise' ? async () => reader : () => reader,
  });
  return { client, calls };
}

describe.each(['promise', 'reader'] as const)(
  'a client over a partial cache (a replica sharded by uid holds its share), the provider answering with a %s',
  (provide) => {
    it('reads a hit from the cache, and a miss and every list from the backend', async () => {
      const { client, calls } = await setUp(true, provide);
      const key = (name: string) => ({ namespace: 'default', name });
      expect((await client.get(configMapType, key('in-1'))).metadata.name).toBe('in-1');
      expect(calls).toEqual([]);
      // Outside the shard: the backend has it.
      expect((await client.get(configMapType, key('out-1'))).metadata.name).toBe('out-1');
      expect((await client.getMetadata(configMapType, key('out-2'))).metadata.name).toBe('out-2');
      // Absent everywhere: the backend says so.
      await expect(client.get(configMapType, key('nowhere'))).rejects.toMatchObject({
        code: 'CONVERGE_ERR_BACKEND_NOT_FOUND',
      });
      expect(calls).toEqual(['get', 'get', 'get']);
      // A list is the whole kind, not the shard.
      const names = (await client.list(configMapType, { namespace: 'default' })).map((o) => o.metadata.name);
      expect(names.sort()).toEqual(['in-1', 'in-2', 'out-1', 'out-2']);
      expect((await client.listMetadata(configMapType, { namespace: 'default' })).length).toBe(4);
      expect(calls.slice(3)).toEqual(['list', 'list']);
    });

    it('a whole cache answers a miss itself, as before', async () => {
      const { client, calls } = await setUp(false, provide);
      await expect(client.get(configMapType, { namespace: 'default', name: 'out-1' })).rejects.toMatchObject({
        code: 'CONVERGE_ERR_BACKEND_NOT_FOUND',
      });
      expect((await client.list(configMapType)).length).toBe(2);
      expect(calls).toEqual([]);
    });
  },
);
