import { describe, expect, it } from 'vitest';
import { resourceType } from '../backend/index.ts';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { enqueueForObject, enqueueForOwner } from '../handler/index.ts';
import { Informer } from '../informer/index.ts';
import { FakeBackend, settle } from '../informer/testing/index.ts';
import { MemoryLogger } from '../log/index.ts';
import type { KubeObject, ObjectKey } from '../object/index.ts';
import {
  done,
  operationOf,
  type PrimaryOperation,
  type ReconcileContext,
  type ReconcileReturn,
  requeue,
  requeueAfter,
} from '../reconcile/index.ts';
import { ChannelSource, fromEventSource } from '../source/index.ts';
import type { Cause, CauseSet } from '../workqueue/index.ts';
import { Controller } from './controller.ts';
import type { ControllerMetrics, ControllerOptions } from './options.ts';

const widgets = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
});
const parts = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Part',
  plural: 'parts',
  namespaced: true,
});

const widget = (name: string, size = 1): KubeObject =>
  ({
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name, namespace: 'ns' },
    spec: { size },
  }) as KubeObject;

interface Run {
  readonly key: string;
  readonly causes: readonly Cause[];
  readonly dropped: number;
}

/**
 * A controller of Widgets fed by a real informer on a FakeBackend. Each reconcile is recorded
 * with its causes; `reply` decides what it returns; `gate` (when set) holds reconciles until
 * it resolves.
 */
function setup(options: Partial<ControllerOptions<ObjectKey>> = {}) {
  const clock = new VirtualClock();
  const backend = new FakeBackend({ clock });
  const logger = new MemoryLogger();
  const informer = new Informer({ backend, type: widgets, clock });
  const runs: Run[] = [];
  const t = {
    clock,
    backend,
    logger,
    runs,
    gate: undefined as Promise<void> | undefined,
    reply: (_run: Run, _context: ReconcileContext): ReconcileReturn => done(),
    controller: undefined as unknown as Controller<ObjectKey>,
    stop: new AbortController(),
    running: undefined as unknown as Promise<void>,
    async start(): Promise<void> {
      t.running = t.controller.start(t.stop.signal);
      await t.flush();
    },
    async flush(ms = 0): Promise<void> {
      await settle();
      await clock.advance(ms);
      await settle();
    },
    async finish(): Promise<void> {
      t.stop.abort();
      await t.running;
    },
    /** Holds reconciles until the returned function is called. */
    hold(): () => void {
      let release = (): void => {};
      t.gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      return () => {
        t.gate = undefined;
        release();
      };
    },
  };
  t.controller = new Controller<ObjectKey>({
    name: 'widgets',
    clock,
    logger,
    sources: [fromEventSource(informer, enqueueForObject())],
    reconciler: async (key, context) => {
      const run = { key: key.name, causes: context.causes, dropped: context.droppedCauses };
      runs.push(run);
      if (t.gate !== undefined) await t.gate;
      return t.reply(run, context);
    },
    ...options,
  });
  return t;
}

/** The causes of a run without object references, for short expectations. */
const types = (run: Run | undefined): string[] =>
  (run?.causes ?? []).map((c) =>
    [c.type, c.initialList === true ? 'initial' : undefined].filter(Boolean).join(' '),
  );

describe('Controller: why a request was reconciled', () => {
  it('each reconcile gets the causes that enqueued it through a real informer: added (initial list, then live), modified, deleted', async () => {
    const t = setup();
    const first = await t.backend.create(widgets, widget('a'));
    await t.start();
    const b = await t.backend.create(widgets, widget('b'));
    await t.flush();
    const a2 = await t.backend.update(widgets, { ...first, spec: { size: 2 } } as KubeObject);
    await t.flush();
    await t.backend.delete(widgets, { namespace: 'ns', name: 'b' });
    await t.flush();
    const ref = (o: KubeObject) => ({
      kind: 'Widget',
      namespace: 'ns',
      name: o.metadata.name,
      uid: o.metadata.uid,
      resourceVersion: o.metadata.resourceVersion,
    });
    expect(t.runs).toEqual([
      {
        key: 'a',
        dropped: 0,
        causes: [{ type: 'added', source: 'widgets', object: ref(first), initialList: true }],
      },
      { key: 'b', dropped: 0, causes: [{ type: 'added', source: 'widgets', object: ref(b) }] },
      { key: 'a', dropped: 0, causes: [{ type: 'modified', source: 'widgets', object: ref(a2) }] },
      {
        key: 'b',
        dropped: 0,
        causes: [
          {
            type: 'deleted',
            source: 'widgets',
            object: expect.objectContaining({ name: 'b', uid: b.metadata.uid }),
          },
        ],
      },
    ]);
    await t.finish();
  });

  it('events for a queued request merge into its one reconcile, oldest first', async () => {
    const t = setup();
    await t.start();
    const release = t.hold();
    await t.backend.create(widgets, widget('busy'));
    await t.flush();
    // The only worker is busy: everything about 'a' waits in the queue, deduplicated.
    const a1 = await t.backend.create(widgets, widget('a'));
    const a2 = await t.backend.update(widgets, { ...a1, spec: { size: 2 } } as KubeObject);
    const a3 = await t.backend.update(widgets, { ...a2, spec: { size: 3 } } as KubeObject);
    await t.flush();
    release();
    await t.flush();
    expect(t.runs.map((r) => r.key)).toEqual(['busy', 'a']);
    expect(types(t.runs[1])).toEqual(['added', 'modified', 'modified']);
    expect(t.runs[1]?.causes.map((c) => c.object?.resourceVersion)).toEqual(
      [a1, a2, a3].map((o) => o.metadata.resourceVersion),
    );
    await t.finish();
  });

  it('causes that arrive while a request is reconciled belong to its next reconcile, not to the running one', async () => {
    const t = setup();
    await t.start();
    const release = t.hold();
    const a = await t.backend.create(widgets, widget('a'));
    await t.flush();
    const running = t.runs[0];
    await t.backend.update(widgets, { ...a, spec: { size: 2 } } as KubeObject);
    await t.flush();
    expect(t.runs).toHaveLength(1);
    release();
    await t.flush();
    expect(types(running)).toEqual(['added']);
    expect(types(t.runs[1])).toEqual(['modified']);
    expect(t.runs).toHaveLength(2);
    await t.finish();
  });

  it('past maxCausesPerKey a reconcile gets the newest causes and the number let go', async () => {
    const t = setup({ maxCausesPerKey: 2 });
    await t.start();
    const release = t.hold();
    await t.backend.create(widgets, widget('busy'));
    await t.flush();
    let a = await t.backend.create(widgets, widget('a'));
    for (let size = 2; size <= 5; size++)
      a = await t.backend.update(widgets, { ...a, spec: { size } } as KubeObject);
    await t.flush();
    release();
    await t.flush();
    expect(t.runs[1]?.causes.map((c) => c.object?.resourceVersion)).toEqual([
      String(Number(a.metadata.resourceVersion) - 1),
      a.metadata.resourceVersion,
    ]);
    expect(t.runs[1]?.dropped).toBe(3);
    await t.finish();
  });

  it('a failed or requeue() reconcile hands its causes on, then retry or requeue; requeueAfter starts afresh', async () => {
    const t = setup();
    const replies = [
      (): ReconcileReturn => {
        throw new Error('boom');
      },
      () => requeue(),
      () => requeueAfter(1000),
      () => done(),
    ];
    t.reply = () => (replies[t.runs.length - 1] as () => ReconcileReturn)();
    await t.backend.create(widgets, widget('a'));
    await t.start();
    await t.flush(100);
    await t.flush(100);
    await t.flush(1000);
    expect(t.runs.map(types)).toEqual([
      ['added initial'],
      ['added initial', 'retry'],
      ['added initial', 'retry', 'requeue'],
      ['requeue-after'],
    ]);
    await t.finish();
  });

  it('an enqueue that names no cause is manual: controller.queue.add, and a channel send from the channel', async () => {
    const wake = new ChannelSource<ObjectKey>({ name: 'wake' });
    const t = setup();
    await t.controller.watch(wake);
    await t.start();
    t.controller.queue.add({ namespace: 'ns', name: 'by-hand' });
    await t.flush();
    wake.send({ namespace: 'ns', name: 'from-channel' });
    await t.flush();
    expect(t.runs.map((r) => [r.key, r.causes])).toEqual([
      ['by-hand', [{ type: 'manual' }]],
      ['from-channel', [{ type: 'manual', source: 'wake' }]],
    ]);
    await t.finish();
  });

  it("the reconcile's log lines carry its causes as short texts, a debug line ends it, and the metric hook gets them", async () => {
    const seen: { result: string; kind: string | undefined; causes: CauseSet | undefined }[] = [];
    // A hook written for the four-argument signature still fits (the dynamic controller's).
    const fourArguments: ControllerMetrics['onReconcile'] = (_c, _r, _d, _k) => {};
    const metrics: ControllerMetrics = {
      onReconcile: (controller, result, durationMs, kind, causes) => {
        fourArguments(controller, result, durationMs, kind);
        seen.push({ result, kind, causes });
      },
    };
    const t = setup({ metrics, maxCausesPerKey: 1 });
    t.reply = (_run, { logger }) => {
      logger.info({}, 'Reconciling widget');
      return done();
    };
    await t.start();
    const release = t.hold();
    await t.backend.create(widgets, widget('busy'));
    await t.flush();
    const a = await t.backend.create(widgets, widget('a'));
    const a2 = await t.backend.update(widgets, { ...a, spec: { size: 2 } } as KubeObject);
    await t.flush();
    release();
    await t.flush();
    const own = t.logger.records.filter((r) => r.message === 'Reconciling widget' && r.fields.name === 'a');
    expect(own.map((r) => r.fields)).toEqual([
      expect.objectContaining({
        causes: [`modified Widget ns/a@${a2.metadata.resourceVersion} via widgets`],
        droppedCauses: 1,
      }),
    ]);
    const finished = t.logger.records.find(
      (r) => r.message === 'Reconcile finished' && r.fields.name === 'a',
    );
    expect(finished).toMatchObject({ level: 'debug', fields: { result: 'success', durationMs: 0 } });
    expect(seen[1]).toEqual({
      result: 'success',
      kind: undefined,
      causes: { causes: [expect.objectContaining({ type: 'modified' })], dropped: 1 },
    });
    await t.finish();
  });
});

describe('Controller: Kumori-style reconcilers branch on operationOf(causes)', () => {
  it('put, delete, purge and secondary, each from a real informer event', async () => {
    const t = setup();
    const ops: (PrimaryOperation | undefined)[] = [];
    t.reply = (run) => {
      ops.push(operationOf(run.causes));
      return done();
    };
    // Parts owned by a Widget wake their owner: secondary causes.
    const partsInformer = new Informer({ backend: t.backend, type: parts, clock: t.clock });
    await t.controller.watch(
      fromEventSource(
        partsInformer,
        enqueueForOwner<KubeObject>({ ownerKind: 'Widget', ownerGroup: 'example.com' }),
      ),
    );
    await t.start();
    const a = await t.backend.create(widgets, widget('a'));
    await t.flush();
    await t.backend.update(widgets, { ...a, spec: { size: 2 } } as KubeObject);
    await t.flush();
    await t.backend.create(parts, {
      apiVersion: 'example.com/v1',
      kind: 'Part',
      metadata: {
        name: 'p',
        namespace: 'ns',
        ownerReferences: [
          { apiVersion: 'example.com/v1', kind: 'Widget', name: 'a', uid: a.metadata.uid as string },
        ],
      },
    });
    await t.flush();
    await t.backend.delete(widgets, { namespace: 'ns', name: 'a' });
    await t.flush();
    // A KV purge, as the NATS backend reports one: a DELETED marked purged.
    const b = await t.backend.create(widgets, widget('b'));
    await t.flush();
    t.backend.inject(widgets, {
      type: 'DELETED',
      object: { ...b, metadata: { ...b.metadata, resourceVersion: String(t.backend.revision + 1) } },
      purged: true,
    });
    await t.flush();
    expect(t.runs.map((r) => r.key)).toEqual(['a', 'a', 'a', 'a', 'b', 'b']);
    expect(ops).toEqual(['put', 'put', 'secondary', 'delete', 'put', 'purge']);
    await t.finish();
  });
});
