import {
  Client,
  type KubeObject,
  NotFoundError,
  requeueAfter,
  resourceType,
  TerminalError,
} from '@converge/runtime';
import { FakeBackend, settle, VirtualClock } from '@converge/runtime/testing';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  ParentBasedSampler,
  type ReadableSpan,
  SamplingDecision,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { TraceAttributes as A } from './attributes.ts';
import { attributesOf, modified, ms, pushController, recorder } from './test-harness.ts';
import { Tracing } from './tracing.ts';

const deployments = resourceType({
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  plural: 'deployments',
  namespaced: true,
});

const rec = recorder();
afterAll(() => rec.close());
beforeEach(() => rec.reset());

const START = Date.UTC(2026, 0, 1);

function deployment(name: string): KubeObject {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { namespace: 'default', name } };
}

/** The parent span id of a span, if any. */
function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

describe('a reconcile span', () => {
  it('is one root span per reconcile, linked to a span per causing event, with the client writes as children', async () => {
    const clock = new VirtualClock({ startMs: START });
    const backend = new FakeBackend({ clock });
    const client = new Client({ backend, clock });
    const { controller, push } = pushController(clock, {
      name: 'websites',
      reconciler: async ({ namespace, name }) => {
        // The one worker is busy while the events of 'web' arrive: its run gets both.
        if (name === 'slow') return clock.sleep(10);
        await client.create(deployments, deployment(name));
        await client.patch(
          deployments,
          { namespace, name },
          { type: 'merge', patch: { spec: { replicas: 2 } } },
        );
      },
    });
    new Tracing({ tracerProvider: rec.provider }).instrument(controller).instrument(client);
    const abort = new AbortController();
    const running = controller.start(abort.signal);
    await clock.advance(0);
    push('slow', modified('slow', '40'));
    push('web', modified('web', '41'));
    await clock.advance(5);
    push('web', modified('web', '42'));
    await clock.advance(5);
    await settle();

    const runs = rec.named('reconcile websites');
    expect(runs.map((r) => r.attributes[A.objectName])).toEqual(['slow', 'web']);
    const reconcile = runs[1];
    if (reconcile === undefined) throw new Error('no reconcile span');
    expect(reconcile.kind).toBe(SpanKind.CONSUMER);
    expect(parentOf(reconcile)).toBeUndefined();
    expect(reconcile.status.code).toBe(SpanStatusCode.UNSET);
    expect(attributesOf(reconcile)).toEqual({
      [A.controller]: 'websites',
      [A.reconcileId]: 'websites-2',
      [A.requestKey]: 'default/web',
      [A.namespace]: 'default',
      [A.objectName]: 'web',
      [A.failures]: 0,
      [A.causes]: 2,
      [A.result]: 'success',
      [A.requeue]: false,
    });

    // A link per cause, to a zero-length PRODUCER span at the time the queue received the event.
    expect(reconcile.links).toHaveLength(2);
    const events = reconcile.links.map((link) => rec.byId(link.context.spanId));
    expect(events.map((e) => e?.name)).toEqual(['modified Widget', 'modified Widget']);
    expect(events.map((e) => e && ms(e.startTime))).toEqual([START, START + 5]);
    expect(events.map((e) => e && ms(e.endTime))).toEqual([START, START + 5]);
    expect(events.every((e) => e?.kind === SpanKind.PRODUCER && parentOf(e) === undefined)).toBe(true);
    expect(reconcile.links[1]?.attributes).toEqual({
      [A.causeType]: 'modified',
      [A.causeSource]: 'widgets',
      [A.objectKind]: 'Widget',
      [A.namespace]: 'default',
      [A.objectName]: 'web',
      [A.objectUid]: 'uid-web',
      [A.objectResourceVersion]: '42',
    });
    expect(attributesOf(events[1] as ReadableSpan)).toEqual(reconcile.links[1]?.attributes);

    // The writes are children of the reconcile, in its trace.
    const writes = rec.spans().filter((s) => s.kind === SpanKind.CLIENT);
    expect(writes.map((s) => s.name)).toEqual(['POST apps/v1 deployments', 'PATCH apps/v1 deployments']);
    for (const write of writes) {
      expect(parentOf(write)).toBe(reconcile.spanContext().spanId);
      expect(write.spanContext().traceId).toBe(reconcile.spanContext().traceId);
    }
    expect(attributesOf(writes[1] as ReadableSpan)).toEqual({
      [A.httpMethod]: 'PATCH',
      [A.verb]: 'patch',
      [A.group]: 'apps',
      [A.version]: 'v1',
      [A.resource]: 'deployments',
      [A.namespace]: 'default',
      [A.objectName]: 'web',
      'k8s.deployment.name': 'web',
    });
    abort.abort();
    await running;
  });

  it('records a failing run’s exception and status ERROR; the retry links to the same event spans', async () => {
    const clock = new VirtualClock({ startMs: START });
    let runs = 0;
    const { controller, push } = pushController(clock, {
      name: 'flaky',
      reconciler: () => {
        runs++;
        if (runs === 1) throw new Error('transient');
        if (runs === 2) return requeueAfter(30_000);
        throw new TerminalError('spec.size must be positive');
      },
    });
    new Tracing({ tracerProvider: rec.provider }).instrument(controller);
    const abort = new AbortController();
    const running = controller.start(abort.signal);
    await clock.advance(0);
    push('web', modified('web', '7'));
    await settle();
    await clock.advance(1_000); // the retry's backoff
    await settle();
    await clock.advance(30_000); // the requeueAfter
    await settle();

    const [failed, retried, terminal] = rec.named('reconcile flaky');
    if (failed === undefined || retried === undefined || terminal === undefined)
      throw new Error('runs missing');
    expect(failed.status).toEqual({ code: SpanStatusCode.ERROR, message: 'transient' });
    expect(failed.attributes[A.result]).toBe('error');
    expect(failed.attributes[A.requeue]).toBe(true);
    expect(failed.attributes[A.errorType]).toBe('Error');
    expect(failed.events.map((e) => [e.name, e.attributes?.['exception.message']])).toEqual([
      ['exception', 'transient'],
    ]);

    // The retry keeps the failed run's causes: the same event span, and one for the retry itself.
    expect(retried.attributes[A.failures]).toBe(1);
    expect(retried.links[0]?.context.spanId).toBe(failed.links[0]?.context.spanId);
    expect(retried.links.map((l) => l.attributes?.[A.causeType])).toEqual(['modified', 'retry']);
    expect(retried.status.code).toBe(SpanStatusCode.UNSET);
    expect(retried.attributes[A.result]).toBe('requeue_after');
    expect(retried.attributes[A.requeueAfterMs]).toBe(30_000);
    expect(rec.named('modified Widget')).toHaveLength(1);

    expect(terminal.links.map((l) => l.attributes?.[A.causeType])).toEqual(['requeue-after']);
    expect(terminal.attributes[A.result]).toBe('terminal');
    expect(terminal.attributes[A.requeue]).toBe(false);
    expect(terminal.attributes[A.errorType]).toBe('CONVERGE_ERR_RECONCILE_TERMINAL');
    expect(terminal.status.code).toBe(SpanStatusCode.ERROR);
    abort.abort();
    await running;
  });

  it('keeps two controllers’ spans apart while their reconciles interleave', async () => {
    const clock = new VirtualClock({ startMs: START });
    const backend = new FakeBackend({ clock });
    const client = new Client({ backend, clock });
    const make = (name: string, delayMs: number) =>
      pushController(clock, {
        name,
        maxConcurrentReconciles: 3,
        reconciler: async ({ namespace, name: object }) => {
          const key = { namespace, name: `${name}-${object}` };
          await client.create(deployments, deployment(key.name));
          await clock.sleep(delayMs);
          await client.patch(deployments, key, { type: 'merge', patch: { spec: { replicas: 1 } } });
          await clock.sleep(delayMs);
          await client.delete(deployments, key);
        },
      });
    const a = make('alpha', 3);
    const b = make('beta', 2);
    const tracing = new Tracing({ tracerProvider: rec.provider });
    tracing.instrument(a.controller).instrument(b.controller).instrument(client);
    const abort = new AbortController();
    const running = [a.controller.start(abort.signal), b.controller.start(abort.signal)];
    await clock.advance(0);
    for (const name of ['x', 'y', 'z']) {
      a.push(name, modified(name, '1'));
      b.push(name, modified(name, '1'));
    }
    for (let i = 0; i < 10; i++) {
      await settle(5);
      await clock.advance(1);
    }
    await settle();

    const reconciles = rec.spans().filter((s) => s.name.startsWith('reconcile '));
    expect(reconciles).toHaveLength(6);
    const writes = rec.spans().filter((s) => s.kind === SpanKind.CLIENT);
    expect(writes).toHaveLength(18);
    for (const write of writes) {
      const parent = reconciles.find((r) => r.spanContext().spanId === parentOf(write));
      if (parent === undefined) throw new Error(`${write.name} has no reconcile parent`);
      // Each write names the object of its own reconcile: `<controller>-<name>`.
      expect(write.attributes[A.objectName]).toBe(
        `${String(parent.attributes[A.controller])}-${String(parent.attributes[A.objectName])}`,
      );
    }
    abort.abort();
    await Promise.all(running);
  });
});

describe('links', () => {
  it('are bounded by the queue’s maxCausesPerKey; the rest are counted; a timed-out run says so', async () => {
    const clock = new VirtualClock({ startMs: START });
    const { controller, push } = pushController(clock, {
      name: 'bounded',
      maxCausesPerKey: 3,
      reconcileTimeoutMs: 100,
      abandonGraceMs: 10,
      reconciler: async ({ name }, { signal }) => {
        if (name === 'slow') await clock.sleep(50);
        if (name === 'hang')
          await new Promise((_, reject) =>
            signal.addEventListener('abort', () => reject(signal.reason as Error)),
          );
      },
    });
    new Tracing({ tracerProvider: rec.provider }).instrument(controller);
    const abort = new AbortController();
    const running = controller.start(abort.signal);
    await clock.advance(0);
    push('slow', modified('slow', '1'));
    for (let rv = 1; rv <= 20; rv++) push('web', modified('web', String(rv)));
    await clock.advance(60);
    push('hang', modified('hang', '1'));
    await clock.advance(200);
    await settle();
    const web = rec.named('reconcile bounded').find((s) => s.attributes[A.objectName] === 'web');
    expect(web?.attributes[A.causes]).toBe(3);
    expect(web?.attributes[A.causesDropped]).toBe(17);
    expect(web?.links.map((l) => l.attributes?.[A.objectResourceVersion])).toEqual(['18', '19', '20']);
    expect(rec.named('modified Widget')).toHaveLength(3 + 1 + 1);
    const hang = rec.named('reconcile bounded').find((s) => s.attributes[A.objectName] === 'hang');
    expect(hang?.attributes[A.timedOut]).toBe(true);
    expect(hang?.attributes[A.errorType]).toBe('CONVERGE_ERR_RECONCILE_TIMEOUT');
    expect(hang?.status.code).toBe(SpanStatusCode.ERROR);
    abort.abort();
    await running;
  });
});

describe('a sampled-out reconcile', () => {
  it('records nothing, its writes neither: they are its children, sampled with it', async () => {
    const exporter = new InMemorySpanExporter();
    // Roots are sampled unless they are reconciles; children follow their parent.
    const sampler = new ParentBasedSampler({
      root: {
        shouldSample: (_, __, name) => ({
          decision: name.startsWith('reconcile ')
            ? SamplingDecision.NOT_RECORD
            : SamplingDecision.RECORD_AND_SAMPLED,
        }),
        toString: () => 'not reconciles',
      },
    });
    const provider = new TracerProvider({ sampler, spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    const clock = new VirtualClock({ startMs: START });
    const client = new Client({ backend: new FakeBackend({ clock }), clock });
    const { controller, push } = pushController(clock, {
      name: 'sampled',
      reconciler: async ({ name }) => {
        await client.create(deployments, deployment(name));
      },
    });
    new Tracing({ tracerProvider: provider }).instrument(controller).instrument(client);
    const abort = new AbortController();
    const running = controller.start(abort.signal);
    await clock.advance(0);
    push('web', modified('web', '1'));
    await settle();
    await client.delete(deployments, { namespace: 'default', name: 'web' });
    // Only the delete, made outside any reconcile, is a sampled root.
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['DELETE apps/v1 deployments']);
    abort.abort();
    await running;
    await provider.shutdown();
  });
});

describe('a client request span', () => {
  it('is a root span outside a reconcile and records a failed request’s reason and status', async () => {
    const backend = new FakeBackend();
    const client = new Client({ backend });
    new Tracing({ tracerProvider: rec.provider }).instrument(client);
    await expect(client.get(deployments, { namespace: 'default', name: 'gone' })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    await client.create(deployments, deployment('web'), { dryRun: true });
    await client
      .patch(
        deployments,
        { namespace: 'default', name: 'web' },
        { type: 'merge', patch: { status: {} } },
        { subresource: 'status' },
      )
      .catch(() => undefined);
    const [get, create, patch] = rec.spans();
    if (get === undefined || create === undefined || patch === undefined) throw new Error('spans missing');
    expect(get.name).toBe('GET apps/v1 deployments');
    expect(parentOf(get)).toBeUndefined();
    expect(get.status).toEqual({ code: SpanStatusCode.ERROR, message: expect.any(String) });
    expect(get.attributes[A.errorType]).toBe('NotFound');
    expect(get.attributes[A.httpStatus]).toBe(404);
    expect(get.events[0]?.name).toBe('exception');
    expect(create.attributes[A.dryRun]).toBe(true);
    expect(create.status.code).toBe(SpanStatusCode.UNSET);
    expect(patch.name).toBe('PATCH apps/v1 deployments/status');
    expect(patch.attributes[A.subresource]).toBe('status');
  });
});
