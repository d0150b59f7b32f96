import {
  type Cause,
  type Controller,
  chainReaches,
  formatCause,
  type KubeObject,
  Manager,
  type ObjectKey,
  type ReconcileContext,
  RemoteWriters,
  resourceType,
} from '@converge/runtime';
import { settle, VirtualClock } from '@converge/runtime/testing';
import { Store } from '@converge/store';
import fc from 'fast-check';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { TraceAttributes as A } from './attributes.ts';
import { Propagation } from './propagation.ts';
import { recorder } from './test-harness.ts';
import { Tracing } from './tracing.ts';
import { formatWrittenBy, parseWrittenBy, WRITTEN_BY_ANNOTATION, type WrittenBy } from './written-by.ts';

const widgets = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
});
const gadgets = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Gadget',
  plural: 'gadgets',
  namespaced: true,
});

type Obj = KubeObject & { spec?: Record<string, unknown> };
type Reconcile = (key: ObjectKey, context: ReconcileContext) => Promise<void>;

const rec = recorder();
afterAll(() => rec.close());
beforeEach(() => rec.reset());

const object = (
  kind: string,
  name: string,
  spec: Record<string, unknown>,
  annotations?: Record<string, string>,
): Obj =>
  ({
    apiVersion: 'example.com/v1',
    kind,
    metadata: { namespace: 'default', name, ...(annotations === undefined ? {} : { annotations }) },
    spec,
  }) as Obj;

/**
 * Two "processes" over one store (the API server): each a manager with its own client, ledger and
 * `Tracing({ propagate: true })`, on one virtual clock.
 */
function world() {
  const clock = new VirtualClock({ startMs: Date.UTC(2026, 11, 6, 12) });
  const store = new Store({ clock, types: [widgets, gadgets] });
  const stop = new AbortController();
  const runs: Promise<void>[] = [];
  const causes: { controller: string; causes: readonly Cause[] }[] = [];
  const process = (id: string, propagate = true) => {
    const manager = new Manager({ clock, backend: store });
    const tracing = new Tracing({ tracerProvider: rec.provider, propagate, processId: id });
    tracing.instrument(manager);
    return {
      manager,
      tracing,
      controller(
        type: typeof widgets,
        name: string,
        reconcile: Reconcile,
        hotLoop: { threshold?: number } = {},
      ): Controller<ObjectKey> {
        const c = manager
          .controller(type)
          .named(name)
          .withOptions({ hotLoop })
          .complete(async (key, context) => {
            causes.push({ controller: name, causes: context.causes });
            await reconcile(key, context);
          });
        tracing.instrument(c);
        return c;
      },
    };
  };
  return {
    clock,
    store,
    causes,
    process,
    start(...managers: Manager[]) {
      for (const m of managers) runs.push(m.start(stop.signal));
    },
    async flush(ms = 0): Promise<void> {
      await settle(30);
      if (ms > 0) await clock.advance(ms);
      await settle(30);
    },
    async finish(): Promise<void> {
      stop.abort();
      await Promise.all(runs);
    },
  };
}

/**
 * A reconciler that writes its own name into the Widget's `owner` annotation unless it is there:
 * two of them, with different names, ping-pong the object. An annotation, not the spec: a
 * generation change would restart the hot-loop count.
 */
const pong =
  (me: string, manager: Manager): Reconcile =>
  async (key) => {
    const o = await manager.client.get<Obj>(widgets, key);
    if (o.metadata.annotations?.owner === me) return;
    await manager.client.update(widgets, {
      ...o,
      metadata: { ...o.metadata, annotations: { ...o.metadata.annotations, owner: me } },
    });
  };

describe('Tracing({ propagate: true }) across processes', () => {
  it('the write of a reconcile in one process is the writtenBy of the other’s cause, and its span is linked', async () => {
    const w = world();
    const a = w.process('process-a');
    const b = w.process('process-b');
    a.controller(widgets, 'copier', async (key) => {
      const source = await a.manager.client.get<Obj>(widgets, key);
      await a.manager.client.create(gadgets, object('Gadget', key.name, source.spec ?? {}));
    });
    b.controller(gadgets, 'gadgets', async () => {});
    await w.store.create(widgets, object('Widget', 'w', { size: 1 }));
    w.start(a.manager, b.manager);
    await w.flush();
    const stored = await w.store.get<Obj>(gadgets, { namespace: 'default', name: 'w' });
    const stamp = parseWrittenBy(stored.metadata.annotations?.[WRITTEN_BY_ANNOTATION]);
    expect(stamp).toMatchObject({ process: 'process-a', controller: 'copier', key: 'default/w', chain: [] });
    expect(stamp?.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);

    const gadgetRuns = w.causes.filter((c) => c.controller === 'gadgets');
    const echo = gadgetRuns.flatMap((r) => r.causes).find((c) => c.writtenBy !== undefined);
    expect(echo?.writtenBy).toMatchObject({
      controller: 'copier',
      key: 'default/w',
      reconcileId: stamp?.reconcileId,
      remote: true,
      causes: [],
    });
    expect(formatCause(echo as Cause)).toContain(
      `written by reconcile ${stamp?.reconcileId} of controller copier (default/w) in another process`,
    );
    // The reader's reconcile span links to the writer's.
    const [copierSpan] = rec.named('reconcile copier');
    const [gadgetSpan] = rec.named('reconcile gadgets');
    const remoteLink = gadgetSpan?.links.find((l) => l.attributes?.[A.writerRemote] === true);
    expect(remoteLink?.context.spanId).toBe(copierSpan?.spanContext().spanId);
    expect(remoteLink?.context.traceId).toBe(copierSpan?.spanContext().traceId);
    expect(remoteLink?.attributes?.[A.writerController]).toBe('copier');
    await w.finish();
  });

  it('a dynamic controller of the manager reads the stamps too', async () => {
    const w = world();
    const a = w.process('process-a');
    const b = w.process('process-b');
    a.controller(widgets, 'copier', async (key) => {
      await a.manager.client.create(gadgets, object('Gadget', key.name, {}));
    });
    const dynamic = b.manager.dynamicController({ name: 'kinds' });
    b.tracing.instrument(dynamic);
    const seen: Cause[] = [];
    w.start(a.manager, b.manager);
    await dynamic.serve(gadgets, (_request, context) => {
      seen.push(...context.causes);
    });
    await w.flush();
    await w.store.create(widgets, object('Widget', 'w', {}));
    await w.flush();
    await w.finish();
    expect(seen.find((c) => c.writtenBy !== undefined)?.writtenBy).toMatchObject({
      controller: 'copier',
      key: 'default/w',
      remote: true,
    });
  });

  it('each change a controller makes names its reconcile; its unchanged writes keep the stamp', async () => {
    const w = world();
    const a = w.process('process-a');
    const b = w.process('process-b');
    a.controller(widgets, 'copier', async (key) => {
      const source = await a.manager.client.get<Obj>(widgets, key);
      const copy = await a.manager.client.get<Obj>(gadgets, key);
      // Unconditional: a no-op whenever the size did not change.
      await a.manager.client.update(gadgets, { ...copy, spec: { size: source.spec?.size } });
    });
    b.controller(gadgets, 'gadgets', async () => {});
    await w.store.create(gadgets, object('Gadget', 'w', {}));
    const created = await w.store.create(widgets, object('Widget', 'w', { size: 1 }));
    w.start(a.manager, b.manager);
    await w.flush();
    const stampAt = async () =>
      parseWrittenBy(
        (await w.store.get<Obj>(gadgets, { namespace: 'default', name: 'w' })).metadata.annotations?.[
          WRITTEN_BY_ANNOTATION
        ],
      )?.reconcileId;
    const first = await stampAt();
    let current = created;
    for (const size of [2, 3]) {
      current = await w.store.update(widgets, { ...current, spec: { size } });
      await w.flush();
    }
    // A label on the widget: the copier runs, its update changes nothing, the stamp stays.
    const third = await stampAt();
    const rv = (await w.store.get<Obj>(gadgets, { namespace: 'default', name: 'w' })).metadata
      .resourceVersion;
    await w.store.update(widgets, { ...current, metadata: { ...current.metadata, labels: { x: 'y' } } });
    await w.flush();
    await w.finish();
    expect(await stampAt()).toBe(third);
    expect(
      (await w.store.get<Obj>(gadgets, { namespace: 'default', name: 'w' })).metadata.resourceVersion,
    ).toBe(rv);
    const named = w.causes
      .filter((r) => r.controller === 'gadgets')
      .flatMap((r) => r.causes)
      .map((c) => c.writtenBy?.reconcileId)
      .filter((id) => id !== undefined);
    expect(new Set(named).size).toBe(3);
    expect(named[0]).toBe(first);
    expect(named.at(-1)).toBe(third);
    expect(first).not.toBe(third);
  });

  it('two controllers in different processes that ping-pong an object are both flagged as a hot loop', async () => {
    const w = world();
    const a = w.process('process-a');
    const b = w.process('process-b');
    const ca = a.controller(widgets, 'a', pong('a', a.manager));
    const cb = b.controller(widgets, 'b', pong('b', b.manager));
    await w.store.create(widgets, object('Widget', 'w', {}));
    w.start(a.manager, b.manager);
    // The loop runs as fast as the store answers: look after each macrotask turn.
    for (let i = 0; i < 500 && (ca.hotLoopKeys() === 0 || cb.hotLoopKeys() === 0); i++) await settle(1);
    const flagged = [ca.hotLoopKeys(), cb.hotLoopKeys()];
    await w.finish();
    expect(flagged).toEqual([1, 1]);
    // a ran because of b's writes, which b made because of a's: the chain reaches a across processes.
    const echo = w.causes
      .filter((r) => r.controller === 'a')
      .flatMap((r) => r.causes)
      .find((c) => c.writtenBy?.remote === true);
    expect(echo?.writtenBy).toMatchObject({ controller: 'b', key: 'default/w' });
    expect(chainReaches(echo as Cause, 'a', 'default/w')).toBe(true);
    expect(formatCause(echo as Cause)).toMatch(
      /written by reconcile b-\w+ of controller b \(default\/w\) in another process, which ran because: modified, written by reconcile a-\w+ of controller a \(default\/w\) in another process/,
    );
  });

  it('the same ping-pong without propagate is invisible to either process', async () => {
    const w = world();
    const a = w.process('process-a', false);
    const b = w.process('process-b', false);
    const ca = a.controller(widgets, 'a', pong('a', a.manager));
    b.controller(widgets, 'b', pong('b', b.manager));
    await w.store.create(widgets, object('Widget', 'w', {}));
    w.start(a.manager, b.manager);
    for (let i = 0; i < 5; i++) await settle(1);
    await w.finish();
    // Each process sees only its own writes: every run that b's write caused counts from zero.
    expect(ca.hotLoopKeys()).toBe(0);
    expect(w.causes.some((r) => r.causes.some((c) => c.writtenBy?.remote === true))).toBe(false);
    const stored = await w.store.get<Obj>(widgets, { namespace: 'default', name: 'w' });
    expect(stored.metadata.annotations?.[WRITTEN_BY_ANNOTATION]).toBeUndefined();
  });

  it.each([
    ['update', 'update'],
    ['merge patch', 'patch'],
  ] as const)('an unconditional no-op %s does not loop because of the annotation', async (_, how) => {
    const w = world();
    const a = w.process('process-a');
    let runs = 0;
    a.controller(widgets, 'noop', async (key) => {
      runs++;
      const o = await a.manager.client.get<Obj>(widgets, key);
      if (how === 'update') await a.manager.client.update(widgets, o);
      else
        await a.manager.client.patch(widgets, key, {
          type: 'merge',
          patch: { metadata: { labels: { app: 'x' } } },
        });
    });
    await w.store.create(widgets, object('Widget', 'w', {}));
    w.start(a.manager);
    await w.flush();
    for (let i = 0; i < 5; i++) await w.flush(1_000);
    const stored = await w.store.get<Obj>(widgets, { namespace: 'default', name: 'w' });
    // The first write adds the stamp (and the label): one echo, one more run, whose write is a no-op.
    expect(runs).toBe(2);
    expect(parseWrittenBy(stored.metadata.annotations?.[WRITTEN_BY_ANNOTATION])?.controller).toBe('noop');
    const rv = stored.metadata.resourceVersion;
    await w.flush(10_000);
    expect(runs).toBe(2);
    expect(
      (await w.store.get<Obj>(widgets, { namespace: 'default', name: 'w' })).metadata.resourceVersion,
    ).toBe(rv);
    await w.finish();
  });

  it('a no-op update keeps a stamp of the same controller and key even when it came from another replica', async () => {
    const w = world();
    const earlier: WrittenBy = {
      process: 'old-replica',
      controller: 'noop',
      key: 'default/w',
      reconcileId: 'noop-9',
      chain: [],
    };
    const stamp = formatWrittenBy(earlier);
    const a = w.process('process-a');
    let runs = 0;
    a.controller(widgets, 'noop', async (key) => {
      runs++;
      await a.manager.client.update(widgets, await a.manager.client.get<Obj>(widgets, key));
    });
    const created = await w.store.create(
      widgets,
      object('Widget', 'w', {}, { [WRITTEN_BY_ANNOTATION]: stamp }),
    );
    w.start(a.manager);
    await w.flush();
    await w.flush(1_000);
    expect(runs).toBe(1);
    const stored = await w.store.get<Obj>(widgets, { namespace: 'default', name: 'w' });
    expect(stored.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect(stored.metadata.annotations?.[WRITTEN_BY_ANNOTATION]).toBe(stamp);
    await w.finish();
  });

  it('objects with a malformed annotation give causes without a writer', async () => {
    const w = world();
    const b = w.process('process-b');
    const seen: Cause[] = [];
    b.controller(widgets, 'reader', async (_key, context) => {
      seen.push(...context.causes);
    });
    w.start(b.manager);
    await w.flush();
    const bad = [
      '',
      '{',
      'null',
      '[]',
      '{"v":1}',
      '{"v":2,"process":"p","controller":"c","key":"k","reconcileId":"r"}',
    ];
    for (const [i, value] of bad.entries())
      await w.store.create(widgets, object('Widget', `w${i}`, {}, { [WRITTEN_BY_ANNOTATION]: value }));
    await w.flush();
    expect(seen.filter((c) => c.type === 'added')).toHaveLength(bad.length);
    expect(seen.every((c) => c.writtenBy === undefined)).toBe(true);
    await w.finish();
  });
});

describe('the written-by annotation', () => {
  const field = fc.string({ minLength: 1, maxLength: 40 });
  const via = fc.option(fc.constantFrom('added' as const, 'modified' as const, 'deleted' as const), {
    nil: undefined,
  });
  const link = fc.record({ controller: field, key: field, reconcileId: field, via }).map((l) => {
    const { via: v, ...rest } = l;
    return v === undefined ? rest : { ...rest, via: v };
  });
  const traceparent = fc
    .tuple(
      fc.stringMatching(/^[0-9a-f]{32}$/),
      fc.stringMatching(/^[0-9a-f]{16}$/),
      fc.constantFrom('00', '01'),
    )
    .filter(([t, s]) => !/^0+$/.test(t) && !/^0+$/.test(s))
    .map(([t, s, f]) => `00-${t}-${s}-${f}`);
  const written = fc
    .record({
      top: link,
      process: field,
      traceparent: fc.option(traceparent, { nil: undefined }),
      chain: fc.array(link, { maxLength: 2 }),
    })
    .map(
      ({ top, process, traceparent: tp, chain }): WrittenBy => ({
        ...top,
        process,
        ...(tp === undefined ? {} : { traceparent: tp }),
        chain,
      }),
    );

  it('reads back what it writes', () => {
    fc.assert(
      fc.property(written, (value) => {
        expect(parseWrittenBy(formatWrittenBy(value))).toEqual(value);
      }),
    );
  });

  it('ignores malformed values, never throwing (fuzzed)', () => {
    const mutated = written.chain((value) =>
      fc.tuple(fc.nat(), fc.string({ maxLength: 3 })).map(([at, text]) => {
        const raw = formatWrittenBy(value);
        const i = at % (raw.length + 1);
        return raw.slice(0, i) + text + raw.slice(i + 1);
      }),
    );
    const json = fc.jsonValue().map((v) => JSON.stringify(v));
    const any = fc.oneof(fc.anything(), fc.string(), json, mutated);
    const propagation = new Propagation('me');
    fc.assert(
      fc.property(any, any, (value, old) => {
        const parsed = parseWrittenBy(value);
        if (parsed !== undefined) expect(parseWrittenBy(formatWrittenBy(parsed))).toEqual(parsed);
        const o = (annotation: unknown) => ({
          metadata: { name: 'w', annotations: { [WRITTEN_BY_ANNOTATION]: annotation } },
        });
        const writer = propagation.lookup({ type: 'update', oldObject: o(old), object: o(value) });
        if (writer !== undefined) {
          expect(parsed).toBeDefined();
          expect(writer.remote).toBe(true);
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it('a lookup names no writer for its own process, an unchanged stamp, or a resync', () => {
    const propagation = new Propagation('me');
    const stamp = (process: string) =>
      formatWrittenBy({ process, controller: 'c', key: 'ns/o', reconcileId: 'c-1', chain: [] });
    const o = (value: string | undefined) => ({
      metadata: {
        name: 'o',
        ...(value === undefined ? {} : { annotations: { [WRITTEN_BY_ANNOTATION]: value } }),
      },
    });
    expect(propagation.lookup({ type: 'create', object: o(stamp('me')) })).toBeUndefined();
    expect(
      propagation.lookup({ type: 'update', oldObject: o(stamp('you')), object: o(stamp('you')) }),
    ).toBeUndefined();
    expect(propagation.lookup({ type: 'delete', object: o(stamp('you')) })).toBeUndefined();
    const writer = propagation.lookup({ type: 'update', oldObject: o(undefined), object: o(stamp('you')) });
    expect(writer).toMatchObject({ controller: 'c', key: 'ns/o', reconcileId: 'c-1', remote: true });
    // Equal stamps give one writer (a cause keeps its identity).
    expect(propagation.lookup({ type: 'create', object: o(stamp('you')) })).toBe(writer);
  });

  it('RemoteWriters passes over a lookup that throws or answers something else', () => {
    const writers = new RemoteWriters();
    expect(writers.active).toBe(false);
    const off = writers.use(() => {
      throw new Error('broken');
    });
    writers.use(() => ({ nonsense: true }) as never);
    writers.use(() => ({ controller: 'c', key: 'k', reconcileId: 'r', causes: [] }));
    const event = { type: 'create' as const, object: {} };
    expect(writers.writerOf(event)).toEqual({
      controller: 'c',
      key: 'k',
      reconcileId: 'r',
      causes: [],
      remote: true,
    });
    off();
    expect(writers.writerOf(event)?.controller).toBe('c');
  });
});
