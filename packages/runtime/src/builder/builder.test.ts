import { describe, expect, it } from 'vitest';
import type { Backend, ListOptions, ResourceType, WatchOptions } from '../backend/index.ts';
import { OptionsError } from '../errors.ts';
import { InformerRegistry } from '../informer/index.ts';
import { Manager } from '../manager/index.ts';
import type { KubeObject, ObjectKey } from '../object/index.ts';
import { kumoriOwnerLabels, setOwnerLabels } from '../ownership/index.ts';
import { generationChanged } from '../predicate/index.ts';
import { done } from '../reconcile/index.ts';
import type { Runnable } from '../runnable/index.ts';
import { ReferenceBackend, suiteTypes } from '../testing/backend-suite/index.ts';
import { MemoryLogger, VirtualClock } from '../testing/index.ts';
import { ControllerBuilder, controllerFor, StopHookFailedError, StopHookTimeoutError } from './index.ts';

const { widget: widgetType, configMap: configMapType } = suiteTypes;
const ns = 'suite-a';

interface Widget extends KubeObject {
  readonly spec: { readonly text: string };
}
interface ConfigMap extends KubeObject {
  readonly data?: Record<string, string>;
}

const widget = (name: string): Widget => ({
  apiVersion: 'suite.converge.dev/v1',
  kind: 'Widget',
  metadata: { name, namespace: ns },
  spec: { text: name },
});
const configMap = (name: string, data: Record<string, string> = {}): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns },
  data,
});

async function settle(clock: VirtualClock, ms = 400): Promise<void> {
  for (let left = ms; left > 0; left -= 10) await clock.advance(10);
}

/** `inner`, with every list and watch of `type` starting `delayMs` late on the clock. */
function slowFor(inner: Backend, clock: VirtualClock, type: ResourceType, delayMs: number): Backend {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      const bound = (value as (...a: unknown[]) => unknown).bind(target);
      if (prop === 'list') {
        return async (t: ResourceType, options?: ListOptions) => {
          if (t.plural === type.plural) await clock.sleep(delayMs, options?.signal);
          return bound(t, options);
        };
      }
      if (prop === 'watch') {
        return (t: ResourceType, options?: WatchOptions) => ({
          async *[Symbol.asyncIterator]() {
            if (t.plural === type.plural) await clock.sleep(delayMs, options?.signal);
            yield* target.watch(t, options);
          },
        });
      }
      return bound;
    },
  });
}

describe('ControllerBuilder.reads: a kind the controller reads but never reconciles for', () => {
  it('starts no worker before the read kind is cached, even when the host does not wait for caches', async () => {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
    const store = new ReferenceBackend({ types: [widgetType, configMapType], clock });
    await store.create(widgetType, widget('w1'));
    await store.create(configMapType, configMap('quota', { max: '3' }));
    const backend = slowFor(store, clock, configMapType, 1_000);
    const informers = new InformerRegistry({ clock });
    const added: Runnable[] = [];
    const seen: { at: number; quota: ConfigMap | undefined }[] = [];
    let quotaCache: { get(key: ObjectKey): ConfigMap | undefined } | undefined;
    new ControllerBuilder({ informers, backend, clock, add: (r) => added.push(r) })
      .for(widgetType)
      .reads(configMapType)
      .complete(async () => {
        seen.push({ at: clock.now(), quota: quotaCache?.get({ namespace: ns, name: 'quota' }) });
        return done();
      });
    // The same spec gives the same shared informer: this is how a reconciler reads it.
    const handle = informers.acquire<ConfigMap>({ backend, type: configMapType });
    quotaCache = handle.informer.cache;
    expect(informers.size).toBe(2);
    const abort = new AbortController();
    const runs = [informers.start(abort.signal), ...added.map((r) => r.start(abort.signal))];
    await settle(clock, 900);
    expect(seen).toEqual([]); // the widget is cached, the quota is not: no worker yet
    await settle(clock, 300);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.at).toBeGreaterThanOrEqual(Date.UTC(2026, 0, 1) + 1_000);
    expect(seen[0]?.quota?.data).toEqual({ max: '3' });
    abort.abort();
    await Promise.all(runs);
  });

  it('never enqueues for events of the read kind, which the cached client serves from the same informer', async () => {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
    const backend = new ReferenceBackend({ types: [widgetType, configMapType], clock });
    const manager = new Manager({ clock, backend });
    const calls: string[] = [];
    const quotas: (string | undefined)[] = [];
    manager
      .controller(widgetType)
      .reads(configMapType)
      .complete(async (key) => {
        calls.push(`${key.namespace}/${key.name}`);
        const quota = await manager.client.get<ConfigMap>(configMapType, {
          namespace: ns,
          name: 'quota',
        });
        quotas.push(quota.data?.max);
        return done();
      });
    await backend.create(configMapType, configMap('quota', { max: '3' }));
    await backend.create(widgetType, widget('w1'));
    const abort = new AbortController();
    const run = manager.start(abort.signal);
    await settle(clock);
    expect(calls).toEqual([`${ns}/w1`]);
    expect(quotas).toEqual(['3']);
    const informersBefore = manager.informers.size;

    const quota = await backend.get<ConfigMap>(configMapType, { namespace: ns, name: 'quota' });
    await backend.update(configMapType, { ...quota, data: { max: '4' } });
    await backend.create(configMapType, configMap('w1', { max: '9' })); // same key as the widget
    await backend.delete(configMapType, { namespace: ns, name: 'quota' });
    await settle(clock);
    expect(calls).toEqual([`${ns}/w1`]);
    expect(manager.informers.size).toBe(informersBefore); // the client reads the builder's informer
    expect(manager.informers.size).toBe(2);
    abort.abort();
    await run;
  });

  it('rejects bad options with a typed error', () => {
    const manager = new Manager({ backend: new ReferenceBackend({ types: [widgetType] }) });
    expect(() => manager.controller(widgetType).reads(configMapType, null as never)).toThrow(OptionsError);
  });
});

describe('ControllerBuilder.onStop: cleanup once the controller stopped', () => {
  function setup(options: { timeoutMs?: number } = {}, hook?: (signal: AbortSignal) => Promise<void>) {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
    const logger = new MemoryLogger();
    const backend = new ReferenceBackend({ types: [widgetType], clock });
    const manager = new Manager({ clock, logger, backend });
    const log: string[] = [];
    const errors: Error[] = [];
    const controller = manager
      .controller(widgetType)
      .onStop(
        async ({ signal }) => {
          log.push(`hook at ${clock.now() - Date.UTC(2026, 0, 1)} (controller ${controller.state})`);
          await hook?.(signal);
          log.push('hook done');
        },
        { ...options, onError: (e) => errors.push(e) },
      )
      .complete(async (key, { signal }) => {
        log.push(`reconcile ${key.name}`);
        // An in-flight reconcile that takes 200 ms to wind down after its signal aborts.
        await new Promise<void>((resolve) =>
          signal.addEventListener('abort', () => resolve(), { once: true }),
        );
        await clock.sleep(200);
        log.push(`reconcile ${key.name} finished`);
        return done();
      });
    return { clock, logger, backend, manager, log, errors };
  }

  it('runs once, after the in-flight reconcile finished', async () => {
    const t = setup();
    await t.backend.create(widgetType, widget('w1'));
    const abort = new AbortController();
    const run = t.manager.start(abort.signal);
    await settle(t.clock);
    expect(t.log).toEqual(['reconcile w1']);
    abort.abort();
    await settle(t.clock);
    await run;
    expect(t.log).toEqual([
      'reconcile w1',
      'reconcile w1 finished',
      'hook at 600 (controller stopped)',
      'hook done',
    ]);
    expect(t.errors).toEqual([]);
  });

  it('stops waiting at its timeout: the signal aborts, the timeout is logged and reported, the manager stops cleanly', async () => {
    let hookSignal: AbortSignal | undefined;
    const t = setup({ timeoutMs: 1_000 }, async (signal) => {
      hookSignal = signal;
      await new Promise(() => {}); // never finishes
    });
    const abort = new AbortController();
    const run = t.manager.start(abort.signal);
    await settle(t.clock);
    abort.abort();
    await settle(t.clock, 990);
    expect(hookSignal?.aborted).toBe(false);
    await settle(t.clock, 20);
    await expect(run).resolves.toBeUndefined();
    expect(hookSignal?.aborted).toBe(true);
    expect(hookSignal?.reason).toBeInstanceOf(StopHookTimeoutError);
    expect(t.errors).toHaveLength(1);
    expect(t.errors[0]).toBeInstanceOf(StopHookTimeoutError);
    const line = t.logger.records.find((r) => r.message === 'Stop hook timed out');
    expect(line).toMatchObject({ level: 'error', fields: { controller: 'widget' } });
    expect(line?.fields.err).toMatchObject({ code: 'CONVERGE_ERR_LIFECYCLE_STOP_HOOK_TIMEOUT' });
  });

  it('logs and reports a failing hook without failing the manager', async () => {
    const t = setup({}, async () => {
      throw new Error('lock server gone');
    });
    const abort = new AbortController();
    const run = t.manager.start(abort.signal);
    await settle(t.clock);
    abort.abort();
    await settle(t.clock);
    await expect(run).resolves.toBeUndefined();
    expect(t.errors).toHaveLength(1);
    const error = t.errors[0] as StopHookFailedError;
    expect(error).toBeInstanceOf(StopHookFailedError);
    expect(error.code).toBe('CONVERGE_ERR_LIFECYCLE_STOP_HOOK_FAILED');
    expect((error.cause as Error).message).toBe('lock server gone');
    expect(t.logger.records.some((r) => r.message === 'Stop hook failed' && r.level === 'error')).toBe(true);
    expect(t.log).not.toContain('hook done');
  });

  it('does not run for a controller that never started (a leader-gated one on a standby)', async () => {
    const clock = new VirtualClock();
    const backend = new ReferenceBackend({ types: [widgetType], clock });
    const manager = new Manager({ clock, backend, leaderElection: { acquire: () => new Promise(() => {}) } });
    let ran = 0;
    manager
      .controller(widgetType)
      .onStop(() => {
        ran++;
      })
      .complete(() => done());
    const abort = new AbortController();
    const run = manager.start(abort.signal);
    await settle(clock);
    abort.abort();
    await settle(clock);
    await run;
    expect(ran).toBe(0);
  });

  it('rejects a hook that is not a function and a timeout that is not positive', () => {
    const manager = new Manager({ backend: new ReferenceBackend({ types: [widgetType] }) });
    expect(() => manager.controller(widgetType).onStop('clean' as never)).toThrow(OptionsError);
    expect(() =>
      manager
        .controller(widgetType)
        .onStop(() => {}, { timeoutMs: 0 })
        .complete(() => done()),
    ).toThrow(OptionsError);
  });
});

describe("the manager's resyncPeriodMs", () => {
  function setup(withGenerationPredicate: boolean) {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
    const backend = new ReferenceBackend({ types: [widgetType, configMapType], clock });
    const manager = new Manager({ clock, backend, resyncPeriodMs: 60_000 });
    const calls: string[] = [];
    const predicates = withGenerationPredicate ? [generationChanged()] : [];
    controllerFor(manager, widgetType, { predicates }).complete((key) => {
      calls.push(key.name);
      return done();
    });
    return { clock, backend, manager, calls };
  }

  it('reconciles every object again each period by default, though nothing changed', async () => {
    const t = setup(false);
    await t.backend.create(widgetType, widget('w1'));
    await t.backend.create(widgetType, widget('w2'));
    const abort = new AbortController();
    const run = t.manager.start(abort.signal);
    await settle(t.clock);
    expect([...t.calls].sort()).toEqual(['w1', 'w2']);
    await settle(t.clock, 60_000 - 400);
    expect([...t.calls].sort()).toEqual(['w1', 'w1', 'w2', 'w2']);
    await settle(t.clock, 60_000);
    expect(t.calls).toHaveLength(6);
    abort.abort();
    await run;
  });

  it('is dropped by generationChanged(), as controller-runtime drops it with GenerationChangedPredicate', async () => {
    const t = setup(true);
    await t.backend.create(widgetType, widget('w1'));
    const abort = new AbortController();
    const run = t.manager.start(abort.signal);
    await settle(t.clock);
    expect(t.calls).toEqual(['w1']);
    await settle(t.clock, 120_000);
    expect(t.calls).toEqual(['w1']);
    // The resyncs did happen; the predicate dropped them.
    const resyncs = t.manager.informers.informers().map((i) => i.stats().resyncs);
    expect(resyncs).toEqual([2]);
    abort.abort();
    await run;
  });

  it('rejects a negative period', () => {
    expect(() => new Manager({ resyncPeriodMs: -1 })).toThrow(OptionsError);
  });
});

describe('ControllerBuilder.owns with ownerLabels', () => {
  it('maps objects labelled in that scheme to their owner, within one backend too', async () => {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
    const backend = new ReferenceBackend({ types: [widgetType, configMapType], clock });
    const manager = new Manager({ clock, backend });
    const calls: string[] = [];
    manager
      .controller(widgetType)
      .owns(configMapType, { ownerLabels: kumoriOwnerLabels })
      .complete((key) => {
        calls.push(key.name);
        return done();
      });
    const abort = new AbortController();
    const run = manager.start(abort.signal);
    await settle(clock);
    const kumoriLabelled = (name: string, owner: string) => ({
      ...configMap(name),
      metadata: {
        name,
        namespace: ns,
        labels: { 'kumori/ownerkind': 'Widget', 'kumori/ownerkey': `${ns}_${owner}` },
      },
    });
    await backend.create(configMapType, kumoriLabelled('a', 'w1'));
    const convergeLabelled = setOwnerLabels(configMap('b'), widgetType, widget('w2'));
    await backend.create(configMapType, convergeLabelled);
    await settle(clock);
    expect(calls).toEqual(['w1']);
    abort.abort();
    await run;
  });

  it('refuses ownerLabels with owner references', () => {
    const manager = new Manager({ backend: new ReferenceBackend({ types: [widgetType, configMapType] }) });
    expect(() =>
      manager
        .controller(widgetType)
        .owns(configMapType, { ownership: 'references', ownerLabels: kumoriOwnerLabels })
        .complete(() => done()),
    ).toThrow(OptionsError);
  });
});
