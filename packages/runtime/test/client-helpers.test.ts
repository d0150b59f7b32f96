import { describe, expect, it } from 'vitest';
import {
  Client,
  createOrPatch,
  createOrUpdate,
  done,
  finalizer,
  InvalidError,
  type KubeObject,
  requeueAfter,
} from '../src/index.ts';
import { ReferenceBackend, suiteTypes } from '../src/testing/backend-suite/index.ts';
import { VirtualClock } from '../src/testing/index.ts';

interface Widget extends KubeObject {
  readonly spec: Record<string, unknown>;
  readonly status?: Record<string, unknown>;
}
const { widget: widgetType, configMap: configMapType } = suiteTypes;
const ns = 'suite-a';
const F = 'suite.converge.dev/cleanup';

function setup() {
  const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
  const backend = new ReferenceBackend({ types: [widgetType, configMapType], clock });
  const client = new Client({ backend, clock });
  const key = { namespace: ns, name: 'w' };
  const create = () =>
    backend.create<Widget>(widgetType, {
      apiVersion: 'suite.converge.dev/v1',
      kind: 'Widget',
      metadata: { name: 'w', namespace: ns },
      spec: { a: 1 },
    });
  return { clock, backend, client, key, create };
}

describe('finalizer()', () => {
  it('adds the finalizer before the first apply, then applies on the patched object', async () => {
    const { client, key, create } = setup();
    await create();
    const seen: string[] = [];
    const object = await client.get<Widget>(widgetType, key);
    await finalizer(client, widgetType, F, object, (event) => {
      seen.push(event.type);
      expect(event.object.metadata.finalizers).toEqual([F]);
      return done();
    });
    expect(seen).toEqual(['apply']);
    expect((await client.get(widgetType, key)).metadata.finalizers).toEqual([F]);
  });

  it('runs cleanup on deletion and removes the finalizer only after cleanup succeeds', async () => {
    const { client, key, create, backend } = setup();
    await create();
    await finalizer(client, widgetType, F, await client.get<Widget>(widgetType, key), () => done());
    await backend.delete(widgetType, key);
    const terminating = await client.get<Widget>(widgetType, key);
    expect(terminating.metadata.deletionTimestamp).toBeDefined();

    await expect(
      finalizer(client, widgetType, F, terminating, () => {
        throw new Error('external resource still there');
      }),
    ).rejects.toThrow('external resource still there');
    expect((await client.get(widgetType, key)).metadata.finalizers).toEqual([F]);

    const waiting = await finalizer(client, widgetType, F, terminating, () => requeueAfter(1000));
    expect(waiting).toEqual(requeueAfter(1000));
    expect((await client.get(widgetType, key)).metadata.finalizers).toEqual([F]);

    const cleaned: string[] = [];
    await finalizer(client, widgetType, F, terminating, (e) => void cleaned.push(e.type));
    expect(cleaned).toEqual(['cleanup']);
    await expect(client.get(widgetType, key)).rejects.toMatchObject({ reason: 'NotFound' });
  });

  it('does nothing for an object being deleted without its finalizer', async () => {
    const { client, key, create, backend } = setup();
    await create();
    await client.patch(widgetType, key, { type: 'merge', patch: { metadata: { finalizers: ['other'] } } });
    await backend.delete(widgetType, key);
    const calls: string[] = [];
    await finalizer(
      client,
      widgetType,
      F,
      await client.get<Widget>(widgetType, key),
      (e) => void calls.push(e.type),
    );
    expect(calls).toEqual([]);
  });

  it('refuses to add the finalizer over a racing writer: the resourceVersion test fails and nothing is applied', async () => {
    const { client, key, create } = setup();
    await create();
    const stale = await client.get<Widget>(widgetType, key);
    await client.patch(widgetType, key, { type: 'merge', patch: { metadata: { labels: { racer: 'yes' } } } });
    const calls: string[] = [];
    await expect(
      finalizer(client, widgetType, F, stale, (e) => void calls.push(e.type)),
    ).rejects.toBeInstanceOf(InvalidError);
    expect(calls).toEqual([]);
    expect((await client.get(widgetType, key)).metadata.finalizers).toBeUndefined();
  });
});

describe('createOrUpdate and createOrPatch', () => {
  it('createOrUpdate creates, then updates, then reports unchanged without writing', async () => {
    const { client, backend } = setup();
    const skeleton = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: ns } };
    const put = (v: string) =>
      createOrUpdate(client, configMapType, skeleton, (cm) => ({ ...cm, data: { v } }));
    expect((await put('1')).result).toBe('created');
    expect((await put('2')).result).toBe('updated');
    const before = await backend.get(configMapType, { namespace: ns, name: 'cm' });
    const third = await put('2');
    expect(third.result).toBe('unchanged');
    expect((await backend.get(configMapType, { namespace: ns, name: 'cm' })).metadata.resourceVersion).toBe(
      before.metadata.resourceVersion,
    );
  });

  it('createOrUpdate refuses a mutate function that renames the object', async () => {
    const { client } = setup();
    const skeleton = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: ns } };
    await expect(
      createOrUpdate(client, configMapType, skeleton, (cm) => ({
        ...cm,
        metadata: { ...cm.metadata, name: 'other' },
      })),
    ).rejects.toMatchObject({ code: 'CONVERGE_ERR_OPTIONS_INVALID' });
  });

  it('createOrPatch patches only the difference and writes status through the status subresource', async () => {
    const { client, backend, key, create } = setup();
    await create();
    // Another writer owns a label; a patch of our fields must keep it.
    await backend.patch(widgetType, key, { type: 'merge', patch: { metadata: { labels: { theirs: 'x' } } } });
    const skeleton = {
      apiVersion: 'suite.converge.dev/v1',
      kind: 'Widget',
      metadata: { name: 'w', namespace: ns },
    } as Widget;
    const { result, object } = await createOrPatch(client, widgetType, skeleton, (w) => ({
      ...w,
      spec: { ...w.spec, b: 2 },
      status: { ready: true },
    }));
    expect(result).toBe('updated');
    expect(object.status).toEqual({ ready: true });
    const stored = await backend.get<Widget>(widgetType, key);
    expect(stored.spec).toEqual({ a: 1, b: 2 });
    expect(stored.status).toEqual({ ready: true });
    expect(stored.metadata.labels).toEqual({ theirs: 'x' });
    expect(stored.metadata.generation).toBe(2);
  });
});
