import { AsyncLocalStorage } from 'node:async_hooks';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NotFoundError, resourceType } from '../backend/index.ts';
import { OptionsError } from '../errors.ts';
import { FakeBackend } from '../informer/testing/index.ts';
import type { KubeObject } from '../object/index.ts';
import { Client } from './client.ts';
import type { ClientInterceptor, ClientRequestInfo } from './intercept.ts';

const widgets = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
});
const namespaces = resourceType({
  group: '',
  version: 'v1',
  kind: 'Namespace',
  plural: 'namespaces',
  namespaced: false,
});

function widget(name: string): KubeObject {
  return { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { namespace: 'ns', name } };
}

describe('a client interceptor', () => {
  it('sees every backend request with what it is about, never a body', async () => {
    const seen: ClientRequestInfo[] = [];
    const client = new Client({
      backend: new FakeBackend(),
      interceptor: {
        aroundRequest: (info, run) => {
          seen.push(info);
          return run();
        },
      },
    });
    const key = { namespace: 'ns', name: 'w' };
    await client.create(widgets, widget('w'));
    await client.get(widgets, key);
    await client.list(widgets, { namespace: 'ns' });
    const current = await client.get(widgets, key);
    await client.update(widgets, current, { dryRun: true });
    const again = await client.get(widgets, key); // the fake backend stores dry runs too
    await client.updateStatus(widgets, { ...again, status: { ok: true } } as KubeObject);
    await client.patch(widgets, key, { type: 'merge', patch: { status: {} } }, { subresource: 'status' });
    await client.delete(widgets, key);
    await client.create(namespaces, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { generateName: 'n-' },
    });
    const base = { group: 'example.com', version: 'v1', resource: 'widgets' };
    expect(seen).toEqual([
      { verb: 'create', ...base, namespace: 'ns', name: 'w' },
      { verb: 'get', ...base, namespace: 'ns', name: 'w' },
      { verb: 'list', ...base, namespace: 'ns' },
      { verb: 'get', ...base, namespace: 'ns', name: 'w' },
      { verb: 'update', ...base, namespace: 'ns', name: 'w', dryRun: true },
      { verb: 'get', ...base, namespace: 'ns', name: 'w' },
      { verb: 'update', ...base, subresource: 'status', namespace: 'ns', name: 'w' },
      { verb: 'patch', ...base, subresource: 'status', namespace: 'ns', name: 'w' },
      { verb: 'delete', ...base, namespace: 'ns', name: 'w' },
      { verb: 'create', group: '', version: 'v1', resource: 'namespaces' },
    ]);
  });

  it('runs the request in its context, nested in the order added; the caller gets the request’s error', async () => {
    const storage = new AsyncLocalStorage<string>();
    const backend = new FakeBackend();
    const inside: (string | undefined)[] = [];
    const original = backend.get.bind(backend);
    backend.get = ((type, key) => {
      inside.push(storage.getStore());
      return original(type, key);
    }) as FakeBackend['get'];
    const order: string[] = [];
    const client = new Client({
      backend,
      interceptor: {
        aroundRequest: (_, run) => {
          order.push('outer');
          return storage.run('outer', run);
        },
      },
    });
    client.observe({
      interceptor: {
        aroundRequest: async (_, run) => {
          order.push('inner');
          try {
            return await storage.run(`${storage.getStore()}>inner`, run);
          } catch {
            return 'swallowed';
          }
        },
      },
    });
    await expect(client.get(widgets, { namespace: 'ns', name: 'none' })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    expect(order).toEqual(['outer', 'inner']);
    expect(inside).toEqual(['outer>inner']);
  });

  it('cannot break a request: a hook that throws, rejects, skips or repeats run still sends it once', async () => {
    const misbehaving: ClientInterceptor['aroundRequest'][] = [
      () => {
        throw new Error('sync throw');
      },
      () => Promise.reject(new Error('rejected')),
      async (_, run) => {
        await run();
        throw new Error('after run');
      },
      async () => undefined,
      async (_, run) => {
        void run(); // dropped: its rejection must not go unhandled
        await Promise.resolve();
        return run();
      },
      () => 'not a promise' as never,
    ];
    for (const aroundRequest of misbehaving) {
      const backend = new FakeBackend();
      let creates = 0;
      const create = backend.create.bind(backend);
      backend.create = ((type, object) => {
        creates++;
        return create(type, object);
      }) as FakeBackend['create'];
      const client = new Client({ backend, interceptor: { aroundRequest } });
      const created = await client.create(widgets, widget('w'));
      expect(created.metadata.resourceVersion).toBeDefined();
      await expect(client.create(widgets, widget('w'))).rejects.toThrow(/already exists/);
      expect(creates).toBe(2);
    }
  });

  it('is checked when added', () => {
    const client = new Client({ backend: new FakeBackend() });
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.record({ aroundRequest: fc.anything() })), (interceptor) => {
        fc.pre(
          interceptor !== undefined &&
            typeof (interceptor as { aroundRequest?: unknown } | null)?.aroundRequest !== 'function',
        );
        expect(() => client.observe({ interceptor: interceptor as ClientInterceptor })).toThrow(OptionsError);
        expect(() => new Client({ backend: new FakeBackend(), interceptor: interceptor as never })).toThrow(
          OptionsError,
        );
      }),
    );
    expect(() => client.observe(null as never)).toThrow(OptionsError);
  });
});
