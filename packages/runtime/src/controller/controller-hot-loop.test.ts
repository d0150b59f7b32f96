import { describe, expect, it } from 'vitest';
import { resourceType } from '../backend/index.ts';
import { createOrUpdate, setControllerReference } from '../client/index.ts';
import { Manager } from '../manager/index.ts';
import type { KubeObject, ObjectKey } from '../object/index.ts';
import { done, type ReconcileContext } from '../reconcile/index.ts';
import { FakeBackend, MemoryLogger, settle, VirtualClock } from '../testing/index.ts';
import { type Cause, causeChain, formatCause } from '../workqueue/index.ts';
import type { Controller } from './controller.ts';
import type { ControllerOptions } from './options.ts';

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

type Widget = KubeObject & { spec?: { size?: number }; status?: { n?: number } };

const widget = (name: string, generation = 1): Widget =>
  ({
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name, namespace: 'ns', generation },
    spec: { size: 1 },
  }) as Widget;

const part = (name: string): KubeObject =>
  ({ apiVersion: 'example.com/v1', kind: 'Part', metadata: { name, namespace: 'ns' } }) as KubeObject;

type Reconcile = (key: ObjectKey, context: ReconcileContext) => Promise<void>;

/** A manager over a FakeBackend on a virtual clock, with one Widget `ns/w`. */
function setup() {
  const clock = new VirtualClock({ startMs: Date.UTC(2026, 11, 6, 12) });
  const backend = new FakeBackend({ clock });
  backend.set(widgets, widget('w'));
  const logger = new MemoryLogger();
  const manager = new Manager({ clock, backend, logger });
  const stop = new AbortController();
  const causes: { controller: string; causes: readonly Cause[] }[] = [];
  let running: Promise<void> | undefined;
  const t = {
    clock,
    backend,
    logger,
    manager,
    causes,
    /** A controller of Widgets named `name` (recording the causes of each run) that runs `reconcile`. */
    controller(
      name: string,
      reconcile: Reconcile,
      options: Partial<ControllerOptions<ObjectKey>> = {},
      owns = false,
    ): Controller<ObjectKey> {
      const builder = manager.controller(widgets).named(name).withOptions(options);
      if (owns) builder.owns(parts);
      return builder.complete(async (key, context) => {
        causes.push({ controller: name, causes: context.causes });
        await reconcile(key, context);
        return done();
      });
    },
    async start(): Promise<void> {
      running = manager.start(stop.signal);
      await t.flush();
    },
    async flush(ms = 0): Promise<void> {
      await settle(20);
      if (ms > 0) await clock.advance(ms);
      await settle(20);
    },
    async finish(): Promise<void> {
      stop.abort();
      await running;
    },
    warnings(): string[] {
      return logger.records
        .filter((r) => r.message === 'Hot loop detected')
        .map((r) => String(r.fields.controller));
    },
  };
  return t;
}

/** A reconciler that bumps `status.n` of its Widget while `n < writes` (each write echoes back). */
function statusWriter(
  t: ReturnType<typeof setup>,
  writes: number,
  each?: (n: number) => Partial<Widget>,
): Reconcile {
  return async (key) => {
    const w = await t.manager.client.get<Widget>(widgets, key);
    const n = w.status?.n ?? 0;
    if (n >= writes) return;
    const extra = each?.(n + 1) ?? {};
    if (extra.metadata !== undefined) {
      await t.manager.client.update(widgets, { ...w, ...extra, status: { n: n + 1 } } as Widget);
      return;
    }
    await t.manager.client.updateStatus(widgets, { ...w, status: { n: n + 1 } });
  };
}

describe('Cause chains', () => {
  it("an echo of a reconcile's write names the reconcile, its key and its causes; formatCause and causeChain print them", async () => {
    const t = setup();
    t.controller(
      'widgets',
      async (key, context) => {
        const owner = await t.manager.client.get<Widget>(widgets, key);
        await createOrUpdate(t.manager.client, parts, part(`${key.name}-part`), (p) =>
          setControllerReference(owner, { ...p, spec: { of: key.name } }),
        );
        void context;
      },
      {},
      true,
    );
    await t.start();
    const runs = t.causes.filter((r) => r.controller === 'widgets');
    // The initial list, then the echo of the Part it created.
    expect(runs.length).toBeGreaterThanOrEqual(2);
    const echo = runs[1]?.causes.find((c) => c.writtenBy !== undefined) as Cause;
    expect(echo.type).toBe('added');
    expect(echo.secondary).toBe(true);
    expect(echo.writtenBy).toMatchObject({ controller: 'widgets', reconcileId: 'widgets-1', key: 'ns/w' });
    expect(echo.writtenBy?.causes.map((c) => c.type)).toEqual(['added']);
    const partRv = echo.object?.resourceVersion;
    expect(formatCause(echo)).toBe(
      `added secondary Part ns/w-part@${partRv} via owns:Part, written by reconcile widgets-1 of controller widgets (ns/w), which ran because: added initial-list Widget ns/w@1 via for:Widget`,
    );
    expect(causeChain(echo)).toEqual([
      `added secondary Part ns/w-part@${partRv} via owns:Part`,
      'written by reconcile widgets-1 of controller widgets (ns/w), which ran because: added initial-list Widget ns/w@1 via for:Widget',
    ]);
    await t.finish();
  });

  it('a chain follows writes across controllers; it is shown three links deep', async () => {
    const t = setup();
    // a bumps a label, b answers with the next value, a with the next, …: a relay of eight
    // writes across two controllers, each the echo of the one before. A run writes only when it
    // ran for the version it reads: one that ran for an older echo (both controllers see every
    // write, and a fast run may read what the other wrote since) leaves the next step to the run
    // the newer version brings, so each write's chain holds every write before it.
    const relay = async (
      key: ObjectKey,
      context: ReconcileContext,
      step: (w: Widget) => Widget | undefined,
    ) => {
      const w = await t.manager.client.get<Widget>(widgets, key);
      if (context.causes.at(-1)?.object?.resourceVersion !== w.metadata.resourceVersion) return;
      const next = step(w);
      if (next !== undefined) await t.manager.client.update(widgets, next);
    };
    t.controller('a', (key, context) =>
      relay(key, context, (w) => {
        const n = Number(w.metadata.labels?.n ?? 0);
        return n % 2 === 0 && n < 8
          ? { ...w, metadata: { ...w.metadata, labels: { n: String(n + 1) } } }
          : undefined;
      }),
    );
    t.controller('b', (key, context) =>
      relay(key, context, (w) => {
        const n = Number(w.metadata.labels?.n ?? 0);
        return n % 2 === 1 && n < 8
          ? { ...w, metadata: { ...w.metadata, labels: { n: String(n + 1) } } }
          : undefined;
      }),
    );
    await t.start();
    const last = t.causes.at(-1)?.causes.at(-1) as Cause;
    const chain = causeChain(last);
    // The cause itself and three writers.
    expect(chain).toHaveLength(4);
    // formatCause shows every cause of each writer's run (a run may coalesce two echoes, so the
    // chain may branch), each branch down to three writers: every writer within three links is
    // named, none below.
    const text = formatCause(last);
    const shown = new Set<string>();
    const hidden = new Set<string>();
    const walk = (c: Cause, depth: number): void => {
      const w = c.writtenBy;
      if (w === undefined) return;
      (depth <= 3 ? shown : hidden).add(w.reconcileId);
      if (depth <= 3) for (const below of w.causes) walk(below, depth + 1);
    };
    walk(last, 1);
    expect(shown.size).toBeGreaterThanOrEqual(3);
    for (const id of shown) expect(text).toContain(`reconcile ${id} `);
    expect(hidden.size).toBeGreaterThan(0);
    for (const id of hidden) if (!shown.has(id)) expect(text).not.toContain(`reconcile ${id} `);
    expect(chain[1]).toMatch(
      /^written by reconcile \w+-\w+ of controller [ab] \(ns\/w\), which ran because: modified Widget ns\/w@\d+ via for:Widget(; modified Widget ns\/w@\d+ via for:Widget)*$/,
    );
    const depth = (c: Cause): number =>
      c.writtenBy === undefined ? 0 : 1 + Math.max(0, ...c.writtenBy.causes.map(depth));
    // Eight writes deep, all kept (a chain is cut back once it reaches 12 links).
    expect(depth(last)).toBe(8);
    await t.finish();
  });

  it('causeChains: false leaves causes as they were and records nothing', async () => {
    const t = setup();
    t.controller('widgets', statusWriter(t, 3), { causeChains: false });
    await t.start();
    expect(t.causes.length).toBe(4);
    expect(t.causes.flatMap((r) => r.causes).some((c) => c.writtenBy !== undefined)).toBe(false);
    expect(t.manager.writeLedger.size).toBe(0);
    await t.finish();
  });
});

describe('Hot-loop detection (10 self-caused runs in a row within 30 s)', () => {
  it('9 self-caused runs in a row are not flagged', async () => {
    const t = setup();
    const c = t.controller('widgets', statusWriter(t, 9));
    await t.start();
    expect(t.causes).toHaveLength(10); // the initial list, then 9 echoes
    expect(c.hotLoopKeys()).toBe(0);
    expect(t.warnings()).toEqual([]);
    await t.finish();
  });

  it('the 10th flags the key: one warning with the chain, hotLoop in inspect(), hotLoopKeys(); cleared after 30 s without one', async () => {
    const t = setup();
    const c = t.controller('widgets', statusWriter(t, 12));
    const selfCaused: string[] = [];
    c.observe({ metrics: { onSelfCausedReconcile: (name) => selfCaused.push(name) } });
    await t.start();
    expect(t.causes).toHaveLength(13);
    expect(selfCaused).toHaveLength(12);
    expect(c.hotLoopKeys()).toBe(1);
    expect(t.warnings()).toEqual(['widgets']);
    const warning = t.logger.records.find((r) => r.message === 'Hot loop detected');
    expect(warning?.level).toBe('warn');
    expect(warning?.fields).toMatchObject({ namespace: 'ns', name: 'w', selfCausedRuns: 10 });
    expect(((warning?.fields.chain ?? []) as string[])[1]).toMatch(
      /^written by reconcile widgets-\w+ of controller widgets \(ns\/w\)/,
    );
    const flagged = c.hotLoops().get('ns/w');
    expect(flagged).toMatchObject({ since: t.clock.now(), selfCausedRuns: 12 });
    expect(flagged?.chain[0]).toMatch(/^modified Widget ns\/w@\d+ via for:Widget$/);
    // A flagged key shows in inspect() while it is queued.
    await t.manager.client.get(widgets, { namespace: 'ns', name: 'w' });
    c.queue.add({ namespace: 'ns', name: 'w' });
    expect(c.inspect()[0]?.hotLoop?.selfCausedRuns).toBe(12);
    await t.flush(29_999);
    expect(c.hotLoopKeys()).toBe(1);
    await t.flush(1);
    expect(c.hotLoopKeys()).toBe(0);
    expect(c.hotLoops().size).toBe(0);
    await t.finish();
  });

  it('10 self-caused runs spread over more than 30 s are not flagged', async () => {
    const t = setup();
    const write = statusWriter(t, 10);
    t.controller('widgets', async (key, context) => {
      await t.clock.sleep(3_500, context.signal);
      await write(key, context);
    });
    await t.start();
    for (let i = 0; i < 12; i++) await t.flush(3_500);
    expect(t.causes).toHaveLength(11);
    expect(t.warnings()).toEqual([]);
    await t.finish();
  });

  it('a generation change of the primary starts the count again', async () => {
    const t = setup();
    // 13 writes; the 5th also bumps the generation: runs 1–4 count for generation 1, 5–13 (9) for 2.
    const c = t.controller(
      'widgets',
      statusWriter(t, 13, (n) =>
        n === 5 ? { metadata: { name: 'w', namespace: 'ns', generation: 2 } } : {},
      ),
    );
    await t.start();
    expect(t.causes).toHaveLength(14);
    expect(c.hotLoopKeys()).toBe(0);
    expect(t.warnings()).toEqual([]);
    await t.finish();
  });

  it('a converging createOrUpdate sequence, edited again and again, is never flagged', async () => {
    const t = setup();
    const c = t.controller(
      'widgets',
      async (key) => {
        const owner = await t.manager.client.get<Widget>(widgets, key);
        for (const suffix of ['a', 'b', 'c']) {
          await createOrUpdate(t.manager.client, parts, part(`${key.name}-${suffix}`), (p) =>
            setControllerReference(owner, { ...p, spec: { size: owner.spec?.size } }),
          );
        }
        if (owner.status?.n !== owner.spec?.size)
          await t.manager.client.updateStatus(widgets, { ...owner, status: { n: owner.spec?.size } });
      },
      {},
      true,
    );
    const selfCaused: string[] = [];
    c.observe({ metrics: { onSelfCausedReconcile: (name) => selfCaused.push(name) } });
    await t.start();
    for (let size = 2; size < 12; size++) {
      const w = await t.manager.client.get<Widget>(widgets, { namespace: 'ns', name: 'w' });
      t.backend.set(widgets, { ...w, spec: { size } });
      await t.flush(100);
    }
    // Each edit converges after a few echoes; none is a loop.
    expect(selfCaused.length).toBeGreaterThan(10);
    expect(c.hotLoopKeys()).toBe(0);
    expect(t.warnings()).toEqual([]);
    await t.finish();
  });

  it('two controllers that ping-pong an annotation are both flagged, once each', async () => {
    const t = setup();
    const pong =
      (me: string): Reconcile =>
      async (key) => {
        const w = await t.manager.client.get<Widget>(widgets, key);
        if (w.metadata.annotations?.owner === me) return;
        await t.manager.client.update(widgets, {
          ...w,
          metadata: { ...w.metadata, annotations: { owner: me } },
        });
      };
    const a = t.controller('a', pong('a'));
    const b = t.controller('b', pong('b'));
    await t.start();
    await t.flush();
    expect(a.hotLoopKeys()).toBe(1);
    expect(b.hotLoopKeys()).toBe(1);
    expect(t.warnings().sort()).toEqual(['a', 'b']);
    const chain = a.hotLoops().get('ns/w')?.chain ?? [];
    expect(chain.some((line) => line.includes('of controller b (ns/w)'))).toBe(true);
    await t.finish();
  });

  it('with the brake, self-caused runs of a flagged key wait 1 s, 2 s, 4 s, … ; other runs do not', async () => {
    const t = setup();
    const starts: number[] = [];
    const pong =
      (me: string): Reconcile =>
      async (key) => {
        if (me === 'a') starts.push(t.clock.now());
        const w = await t.manager.client.get<Widget>(widgets, key);
        if (w.metadata.annotations?.owner === me) return;
        await t.manager.client.update(widgets, {
          ...w,
          metadata: { ...w.metadata, annotations: { owner: me } },
        });
      };
    const brake = { hotLoop: { brake: true } };
    const a = t.controller('a', pong('a'), brake);
    t.controller('b', pong('b'), brake);
    await t.start();
    await t.flush();
    expect(a.hotLoopKeys()).toBe(1);
    const t0 = t.clock.now();
    const before = starts.length;
    for (let i = 0; i < 32; i++) await t.flush(1_000);
    const later = starts.slice(before).map((s) => s - t0);
    // a's self-caused runs wait 1 s, 2 s, 4 s, 8 s, 16 s after the one before.
    expect(later).toEqual([1_000, 3_000, 7_000, 15_000, 31_000]);
    // An edit by someone else runs at once.
    const w = await t.manager.client.get<Widget>(widgets, { namespace: 'ns', name: 'w' });
    const n = starts.length;
    t.backend.set(widgets, { ...w, spec: { size: 5 } });
    await t.flush();
    expect(starts.length).toBeGreaterThan(n);
    await t.finish();
  });

  it('hotLoop: false counts nothing', async () => {
    const t = setup();
    const c = t.controller('widgets', statusWriter(t, 12), { hotLoop: false });
    await t.start();
    expect(t.causes).toHaveLength(13);
    expect(t.causes.at(-1)?.causes[0]?.writtenBy?.controller).toBe('widgets');
    expect(c.hotLoopKeys()).toBe(0);
    expect(t.warnings()).toEqual([]);
    await t.finish();
  });
});
