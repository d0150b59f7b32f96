import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resourceType } from '../backend/index.ts';
import { Client } from '../client/index.ts';
import { OptionsError } from '../errors.ts';
import type { ObjectEvent } from '../event/index.ts';
import { enqueueForObject, enqueueForOwner, type RequestQueue } from '../handler/index.ts';
import { FakeBackend } from '../informer/testing/index.ts';
import type { KubeObject, ObjectKey } from '../object/index.ts';
import type { AddOptions, Cause, CauseWriter } from '../workqueue/index.ts';
import { formatCause } from '../workqueue/index.ts';
import { EventChannel } from './event-channel.ts';
import { fromEventSource } from './from-event-source.ts';
import { RemoteWriters } from './remote-writers.ts';

const widgets = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
});

const widget = (name: string, rv: string, by?: string): KubeObject => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: {
    name,
    namespace: 'ns',
    resourceVersion: rv,
    uid: `uid-${name}`,
    ...(by === undefined ? {} : { annotations: { by } }),
    ownerReferences: [
      { apiVersion: 'example.com/v1', kind: 'Owner', name: 'o', uid: 'uid-o', controller: true },
    ],
  },
});

const writer = (controller: string): CauseWriter => ({
  controller,
  key: 'ns/o',
  reconcileId: `${controller}-1`,
  causes: [],
});

/** A lookup that names the writer an object's `by` annotation holds. */
const byAnnotation = (event: ObjectEvent<unknown>): CauseWriter | undefined => {
  const by = (event.object as KubeObject).metadata.annotations?.by;
  return by === undefined ? undefined : writer(by);
};

function collect(): { causes: (Cause | undefined)[]; queue: RequestQueue<ObjectKey> } {
  const causes: (Cause | undefined)[] = [];
  const push = (_: ObjectKey, options?: AddOptions): void => {
    causes.push(options?.cause);
  };
  return { causes, queue: { add: push, addAfter: (r, _d, o) => push(r, o) } };
}

async function through(
  remoteWriters: RemoteWriters,
  send: (events: EventChannel<KubeObject>) => void,
  owner = false,
): Promise<(Cause | undefined)[]> {
  const events = new EventChannel<KubeObject>();
  const handler = owner
    ? enqueueForOwner({ ownerKind: 'Owner', ownerGroup: 'example.com' })
    : enqueueForObject();
  const source = fromEventSource({ eventSource: events, handler, name: 'widgets', remoteWriters });
  const { causes, queue } = collect();
  const stop = new AbortController();
  const running = source.start(stop.signal, queue);
  send(events);
  stop.abort();
  await running;
  return causes;
}

describe('RemoteWriters', () => {
  it('gives the causes of live creates and updates the writer the lookup names, marked remote', async () => {
    const remote = new RemoteWriters();
    remote.use(byAnnotation);
    const causes = await through(remote, (events) => {
      events.create(widget('a', '1', 'x'));
      events.update(widget('a', '1', 'x'), widget('a', '2', 'y'));
      events.create(widget('b', '3'));
    });
    expect(causes.map((c) => c?.writtenBy)).toEqual([
      { ...writer('x'), remote: true },
      { ...writer('y'), remote: true },
      undefined,
    ]);
    expect(formatCause(causes[1] as Cause)).toBe(
      'modified Widget ns/a@2 via widgets, written by reconcile y-1 of controller y (ns/o) in another process',
    );
  });

  it('asks nothing for initial lists, resyncs, deletes and generic events, nor while no lookup is installed', async () => {
    const remote = new RemoteWriters();
    let asked = 0;
    const send = (events: EventChannel<KubeObject>) => {
      events.create(widget('a', '1', 'x'), { isInInitialList: true });
      events.update(widget('a', '1', 'x'), widget('a', '1', 'x'), { isResync: true });
      events.delete(widget('a', '2', 'x'));
      events.generic(widget('a', '2', 'x'));
    };
    expect((await through(remote, send)).every((c) => c?.writtenBy === undefined)).toBe(true);
    remote.use((event) => {
      asked++;
      return byAnnotation(event);
    });
    expect((await through(remote, send)).every((c) => c?.writtenBy === undefined)).toBe(true);
    expect(asked).toBe(0);
  });

  it('names the writer on the causes a handler makes itself (an owner’s), about the event’s version', async () => {
    const remote = new RemoteWriters();
    remote.use(byAnnotation);
    const causes = await through(remote, (events) => events.create(widget('a', '1', 'x')), true);
    expect(causes[0]).toMatchObject({
      type: 'added',
      secondary: true,
      writtenBy: { controller: 'x', remote: true },
    });
  });

  it('passes over lookups that throw or answer anything but a writer (fuzzed), and can remove one', () => {
    fc.assert(
      fc.property(fc.anything(), (answer) => {
        const remote = new RemoteWriters();
        remote.use(() => {
          throw new Error('broken');
        });
        const off = remote.use(() => answer as CauseWriter);
        const event = { type: 'create' as const, object: widget('a', '1') };
        const got = remote.writerOf(event);
        if (got !== undefined) expect(got.remote).toBe(true);
        off();
        expect(remote.writerOf(event)).toBeUndefined();
      }),
    );
    expect(() => new RemoteWriters().use('nope' as never)).toThrow(OptionsError);
    expect(() =>
      fromEventSource({
        eventSource: new EventChannel(),
        handler: enqueueForObject(),
        remoteWriters: {} as never,
      }),
    ).toThrow(OptionsError);
  });
});

describe('ClientInterceptor.prepareWrite', () => {
  it('changes what create, update, updateStatus and patch send, never dry runs nor the caller’s object', async () => {
    const backend = new FakeBackend();
    const seen: string[] = [];
    const client = new Client({
      backend,
      interceptor: {
        aroundRequest: (_info, run) => run(),
        prepareWrite: (info, body) => {
          seen.push(`${info.verb}${info.subresource === undefined ? '' : `/${info.subresource}`}`);
          if ('object' in body) {
            const o = body.object as KubeObject;
            return { object: { ...o, metadata: { ...o.metadata, labels: { stamped: info.verb } } } };
          }
          return { patch: { ...body.patch, patch: { metadata: { labels: { stamped: 'patch' } } } } as never };
        },
      },
    });
    const mine = widget('w', '');
    delete (mine.metadata as { resourceVersion?: string }).resourceVersion;
    const created = await client.create(widgets, mine);
    expect(created.metadata.labels).toEqual({ stamped: 'create' });
    expect(mine.metadata.labels).toBeUndefined();
    const updated = await client.update(widgets, {
      ...created,
      metadata: { ...created.metadata, labels: {} },
    });
    expect(updated.metadata.labels).toEqual({ stamped: 'update' });
    const status = await client.updateStatus(widgets, updated);
    const dry = await client.update(
      widgets,
      { ...status, metadata: { ...status.metadata, labels: {} } },
      { dryRun: true },
    );
    expect(dry.metadata.labels).toEqual({});
    const patched = await client.patch(widgets, { namespace: 'ns', name: 'w' }, { type: 'merge', patch: {} });
    expect(patched.metadata.labels).toEqual({ stamped: 'patch' });
    expect(seen).toEqual(['create', 'update', 'update/status', 'patch']);
  });

  it('is ignored when it throws or returns another shape', async () => {
    const answers: unknown[] = [undefined, null, 'x', {}, { patch: { type: 'json', patch: [] } }];
    for (const answer of answers) {
      const client = new Client({
        backend: new FakeBackend(),
        interceptor: {
          aroundRequest: (_info, run) => run(),
          prepareWrite: () => {
            if (answer === undefined) throw new Error('broken');
            return answer as never;
          },
        },
      });
      const created = await client.create(widgets, {
        ...widget('w', ''),
        metadata: { namespace: 'ns', name: 'w' },
      });
      expect(created.metadata.name).toBe('w');
      const patched = await client.patch(
        widgets,
        { namespace: 'ns', name: 'w' },
        { type: 'merge', patch: { spec: { a: 1 } } },
      );
      expect((patched as KubeObject & { spec?: unknown }).spec).toEqual({ a: 1 });
    }
  });

  it('two interceptors prepare in order, the first one’s output going to the second', async () => {
    const order: string[] = [];
    const client = new Client({ backend: new FakeBackend() });
    const stamp = (name: string) => ({
      aroundRequest: (_i: unknown, run: () => Promise<unknown>) => run(),
      prepareWrite: (_i: unknown, body: { readonly object: KubeObject }) => {
        order.push(`${name}:${Object.keys(body.object.metadata.labels ?? {}).join(',')}`);
        const o = body.object;
        return {
          object: { ...o, metadata: { ...o.metadata, labels: { ...o.metadata.labels, [name]: '1' } } },
        };
      },
    });
    client.observe({ interceptor: stamp('first') as never });
    client.observe({ interceptor: { aroundRequest: (_i, run) => run() } });
    client.observe({ interceptor: stamp('second') as never });
    const created = await client.create<KubeObject>(widgets, {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { namespace: 'ns', name: 'w' },
    });
    expect(created.metadata.labels).toEqual({ first: '1', second: '1' });
    expect(order).toEqual(['first:', 'second:first']);
  });
});
