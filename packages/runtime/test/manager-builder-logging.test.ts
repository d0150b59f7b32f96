import { describe, expect, it } from 'vitest';
import { done, type KubeObject, Manager, MemoryLogger, type ObjectKey, requeueAfter } from '../src/index.ts';
import { ReferenceBackend, suiteTypes } from '../src/testing/backend-suite/index.ts';
import { VirtualClock } from '../src/testing/index.ts';

const { widget: widgetType } = suiteTypes;
const ns = 'suite-a';

function widget(name: string): KubeObject {
  return {
    apiVersion: 'suite.converge.dev/v1',
    kind: 'Widget',
    metadata: { name, namespace: ns },
    spec: { text: name },
  } as KubeObject;
}

async function settle(clock: VirtualClock, rounds = 40): Promise<void> {
  for (let i = 0; i < rounds; i++) await clock.advance(10);
}

function setup() {
  const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
  const backend = new ReferenceBackend({ types: [widgetType], clock });
  const logger = new MemoryLogger();
  const manager = new Manager({ clock, backend, logger });
  return { clock, backend, logger, manager };
}

describe('controllers built with manager.controller()', () => {
  it('log through the manager logger: reconcile lines carry controller, namespace, name and reconcileId; a thrown error is a "Reconciler error" at error level with its stack', async () => {
    const { clock, backend, logger, manager } = setup();
    manager
      .controller(widgetType)
      .named('widgets')
      .complete(async (key, ctx) => {
        ctx.logger.info({ attempt: ctx.failures }, 'Reconciling widget');
        throw new Error(`cannot reconcile ${key.name}`);
      });
    const abort = new AbortController();
    const run = manager.start(abort.signal);
    await settle(clock);
    await backend.create(widgetType, widget('w1'));
    await settle(clock);
    abort.abort();
    await run;

    const own = logger.records.find((r) => r.message === 'Reconciling widget');
    expect(own?.level).toBe('info');
    expect(own?.fields).toMatchObject({ controller: 'widgets', namespace: ns, name: 'w1', attempt: 0 });
    const reconcileId = own?.fields.reconcileId;
    expect(reconcileId).toEqual(expect.any(String));

    const errors = logger.records.filter((r) => r.message === 'Reconciler error');
    expect(errors.length).toBeGreaterThan(1); // retried with backoff, each failure logged
    const first = errors[0];
    expect(first?.level).toBe('error');
    expect(first?.fields).toMatchObject({ controller: 'widgets', namespace: ns, name: 'w1', reconcileId });
    const err = first?.fields.err;
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toBe('cannot reconcile w1');
    expect((err as Error).stack).toContain('manager-builder-logging.test.ts');
    // The controller's own lifecycle lines go to the same logger.
    expect(
      logger.records.some((r) => r.message === 'Starting workers' && r.fields.controller === 'widgets'),
    ).toBe(true);
  });

  it('run on the manager clock: a requeueAfter comes due on virtual time', async () => {
    const { clock, backend, manager } = setup();
    const calls: ObjectKey[] = [];
    manager.controller(widgetType).complete((key) => {
      calls.push(key);
      return calls.length === 1 ? requeueAfter(60_000) : done();
    });
    const abort = new AbortController();
    const run = manager.start(abort.signal);
    await settle(clock);
    await backend.create(widgetType, widget('w1'));
    await settle(clock);
    expect(calls).toHaveLength(1);
    await clock.advance(60_000);
    await settle(clock);
    expect(calls).toEqual([
      { namespace: ns, name: 'w1' },
      { namespace: ns, name: 'w1' },
    ]);
    abort.abort();
    await run;
  });

  it('use the logger and clock given in withOptions over the manager ones', async () => {
    const { clock, backend, logger, manager } = setup();
    const own = new MemoryLogger();
    manager
      .controller(widgetType)
      .withOptions({ logger: own })
      .complete(() => {
        throw new Error('nope');
      });
    const abort = new AbortController();
    const run = manager.start(abort.signal);
    await settle(clock);
    await backend.create(widgetType, widget('w1'));
    await settle(clock);
    abort.abort();
    await run;
    expect(own.records.some((r) => r.message === 'Reconciler error')).toBe(true);
    expect(logger.records.some((r) => r.message === 'Reconciler error')).toBe(false);
  });
});
