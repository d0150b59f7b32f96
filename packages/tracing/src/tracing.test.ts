import { Client, Controller, type KubeObject, Manager, OptionsError, resourceType } from '@converge/runtime';
import { FakeBackend, settle, VirtualClock } from '@converge/runtime/testing';
import { context, SpanKind, trace } from '@opentelemetry/api';
import fc from 'fast-check';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { TraceAttributes as A } from './attributes.ts';
import { modified, pushController, recorder } from './test-harness.ts';
import { Tracing } from './tracing.ts';

const widgets = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
});

const rec = recorder();
afterAll(() => rec.close());
beforeEach(() => rec.reset());

function widget(name: string, size: number): KubeObject {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { namespace: 'default', name },
    spec: { size },
  } as KubeObject;
}

describe('Tracing.instrument', () => {
  it('traces a manager’s client and a built controller: links carry the watch event’s resourceVersion', async () => {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
    const backend = new FakeBackend({ clock });
    backend.set(widgets, widget('w', 1));
    const manager = new Manager({ clock, backend });
    const controller = manager.controller(widgets).complete(async (key) => {
      const current = await manager.client.get<KubeObject & { status?: { ready?: boolean } }>(widgets, key);
      if (current.status?.ready !== true)
        await manager.client.updateStatus(widgets, { ...current, status: { ready: true } });
    });
    new Tracing({ tracerProvider: rec.provider }).instrument(manager).instrument(controller);
    const abort = new AbortController();
    const running = manager.start(abort.signal);
    await settle();
    await clock.advance(0);
    await settle();
    const stored = await backend.get(widgets, { namespace: 'default', name: 'w' });
    const [run, again, ...more] = rec.named('reconcile widget');
    if (run === undefined || again === undefined) throw new Error('no reconcile span');
    expect(more).toHaveLength(0);
    // The read came from the cache: no span; the status update went to the backend.
    const writes = rec.spans().filter((s) => s.kind === SpanKind.CLIENT);
    expect(writes.map((s) => s.name)).toEqual(['PUT example.com/v1 widgets/status']);
    expect(writes[0]?.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
    expect(run.links.map((l) => l.attributes)).toEqual([
      {
        [A.causeType]: 'added',
        [A.causeInitialList]: true,
        [A.causeSource]: expect.any(String),
        [A.objectKind]: 'Widget',
        [A.namespace]: 'default',
        [A.objectName]: 'w',
        [A.objectUid]: expect.any(String),
        [A.objectResourceVersion]: expect.any(String),
      },
    ]);
    expect(Number(run.links[0]?.attributes?.[A.objectResourceVersion])).toBeLessThan(
      Number(stored.metadata.resourceVersion),
    );
    // The status update came back as a watch event: the next run links to it, at its resourceVersion.
    expect(again.links.map((l) => l.attributes?.[A.causeType])).toEqual(['modified']);
    expect(again.links[0]?.attributes?.[A.objectResourceVersion]).toBe(stored.metadata.resourceVersion);
    abort.abort();
    await running;
  });

  it('traces a dynamic controller’s reconciles with their kind (a semantic-convention name for built-ins)', async () => {
    const clock = new VirtualClock();
    const backend = new FakeBackend({ clock });
    const deployments = resourceType({
      group: 'apps',
      version: 'v1',
      kind: 'Deployment',
      plural: 'deployments',
      namespaced: true,
    });
    backend.set(deployments, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { namespace: 'default', name: 'web' },
    });
    const manager = new Manager({ clock, backend });
    const dynamic = manager.dynamicController({ name: 'kinds' });
    new Tracing({ tracerProvider: rec.provider }).instrument(dynamic);
    const abort = new AbortController();
    const running = manager.start(abort.signal);
    await dynamic.serve(deployments, () => undefined);
    await settle();
    const [run] = rec.named('reconcile kinds');
    expect(run?.attributes).toMatchObject({
      [A.kind]: 'apps/v1/deployments',
      [A.namespace]: 'default',
      [A.objectName]: 'web',
      'k8s.deployment.name': 'web',
      [A.result]: 'success',
    });
    abort.abort();
    await running;
  });

  it('is idempotent per part, and a reconcile is a root even when the controller started inside a span', async () => {
    const clock = new VirtualClock();
    const { controller, push } = pushController(clock, { name: 'once', reconciler: () => undefined });
    const tracing = new Tracing({ tracerProvider: rec.provider });
    tracing.instrument(controller).instrument(controller);
    const abort = new AbortController();
    const outer = rec.provider.getTracer('test').startSpan('operator main');
    const running = context.with(trace.setSpan(context.active(), outer), () =>
      controller.start(abort.signal),
    );
    await clock.advance(0);
    push('a', modified('a', '1'));
    await settle();
    outer.end();
    const runs = rec.named('reconcile once');
    expect(runs).toHaveLength(1);
    expect(runs[0]?.parentSpanContext).toBeUndefined();
    expect(runs[0]?.spanContext().traceId).not.toBe(outer.spanContext().traceId);
    abort.abort();
    await running;
  });

  it('offers its interceptors for parts wired by hand', async () => {
    const clock = new VirtualClock();
    const tracing = new Tracing({ tracerProvider: rec.provider });
    const client = new Client({
      backend: new FakeBackend({ clock }),
      interceptor: tracing.clientInterceptor,
    });
    const controller = new Controller<string>({
      name: 'by-hand',
      clock,
      interceptor: tracing.reconcileInterceptor,
      reconciler: async (name) => {
        await client.create(widgets, widget(name, 1));
      },
    });
    const abort = new AbortController();
    const running = controller.start(abort.signal);
    await clock.advance(0);
    controller.queue.add('x');
    await settle();
    const [run] = rec.named('reconcile by-hand');
    expect(run?.attributes[A.requestKey]).toBe('x');
    expect(run?.attributes[A.objectName]).toBeUndefined();
    // A cause of type manual has no object: its span is named by its type alone.
    expect(run?.links.map((l) => l.attributes?.[A.causeType])).toEqual(['manual']);
    expect(rec.named('manual')).toHaveLength(1);
    expect(rec.named('POST example.com/v1 widgets')[0]?.parentSpanContext?.spanId).toBe(
      run?.spanContext().spanId,
    );
    abort.abort();
    await running;
  });

  it('refuses what it cannot trace with an OptionsError', () => {
    const tracing = new Tracing();
    fc.assert(
      fc.property(
        fc.oneof(
          fc.anything(),
          fc.record({ name: fc.string() }),
          fc.record({ observe: fc.constant('not a function'), backend: fc.anything() }),
          fc.record({ informers: fc.constant(null), client: fc.anything() }),
        ),
        (target) => {
          expect(() => tracing.instrument(target as never)).toThrow(OptionsError);
        },
      ),
    );
    expect(() => new Tracing(null as never)).toThrow(OptionsError);
    expect(() => new Tracing({ tracerProvider: {} as never })).toThrow(OptionsError);
  });
});
