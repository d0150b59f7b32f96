import { describe, expect, it } from 'vitest';
import { RequeueAfterError, TerminalError } from '../reconcile/index.ts';
import { InvalidReconcileResultError } from './errors.ts';
import type { WatcherErrorInfo } from './informer-controller-options.ts';
import { linearRetryPolicy, setup, type Widget, widget } from './informer-controller-test-support.ts';
import { withReconcileState } from './reconcile-state.ts';
import { opinionatedRetryDequeuePolicy } from './retry-dequeue-policy.ts';
import type { EventReconciler, ReconcileResult } from './types.ts';

describe('InformerController with event reconcilers (app-sdk v0.10+)', () => {
  it('runs reconcilers after the watchers, in add order', async () => {
    const { controller, events, clock, start } = setup();
    const order: string[] = [];
    controller.addReconciler({ reconcile: () => void order.push('r1') }, 'Widget');
    controller.addWatcher({ add: () => void order.push('w1') }, 'Widget');
    controller.addReconciler({ reconcile: () => void order.push('r2') }, 'Widget');
    controller.addWatcher({ add: () => void order.push('w2') }, 'Widget');
    void start();
    events.create(widget('w'));
    await clock.advance(0);
    expect(order).toEqual(['w1', 'w2', 'r1', 'r2']);
  });

  it('a result with requeueAfterMs runs the same request again after that long, keeping the attempt and handing back the state', async () => {
    const { controller, events, clock, start } = setup();
    const seen: [string, number, unknown, number][] = [];
    const reconciler: EventReconciler<Widget, number> = {
      reconcile({ action, state }, { attempt }) {
        seen.push([action, attempt, state, clock.now()]);
        const next = (state ?? 0) + 1;
        return next <= 3 ? { requeueAfterMs: 1_000, state: next } : {};
      },
    };
    controller.addReconciler(reconciler, 'Widget');
    void start();
    events.create(widget('w'));
    await clock.advance(60_000);
    expect(seen).toEqual([
      ['create', 0, undefined, 0],
      ['create', 0, 1, 1_000],
      ['create', 0, 2, 2_000],
      ['create', 0, 3, 3_000],
    ]);
    expect(controller.stats().pendingRetries).toBe(0);
  });

  it('a thrown error goes through the retry policy, is reported, and the retried request keeps the last state', async () => {
    const infos: WatcherErrorInfo[] = [];
    const { controller, events, clock, start } = setup({
      retryPolicy: linearRetryPolicy(500, 2),
      onError: (_e, info) => infos.push(info),
    });
    const seen: [number, unknown, number][] = [];
    controller.addReconciler<Widget, string>(
      {
        reconcile({ state }, { attempt }) {
          seen.push([attempt, state, clock.now()]);
          if (state === undefined) return { requeueAfterMs: 100, state: 'half-done' };
          throw new Error('still failing');
        },
      },
      'Widget',
      { name: 'finisher' },
    );
    void start();
    events.create(widget('w'));
    await clock.advance(60_000);
    expect(seen).toEqual([
      [0, undefined, 0],
      [0, 'half-done', 100],
      [1, 'half-done', 600],
      [2, 'half-done', 1_100],
    ]);
    expect(infos.map((i) => [i.handler, i.watcher, i.attempt, i.retryInMs])).toEqual([
      ['reconciler', 'finisher', 0, 500],
      ['reconciler', 'finisher', 1, 500],
      ['reconciler', 'finisher', 2, undefined],
    ]);
  });

  it('an error carrying a state (withReconcileState) hands that state to the retried request', async () => {
    const { controller, events, clock, start } = setup({ retryPolicy: linearRetryPolicy(100, 2) });
    const seen: [number, unknown][] = [];
    controller.addReconciler<Widget, string>(
      {
        reconcile({ state }, { attempt }) {
          seen.push([attempt, state]);
          if (attempt === 0) throw withReconcileState(new Error('patch failed'), 'patch-owed');
          if (attempt === 1) throw new Error('still failing, no new state');
          return undefined;
        },
      },
      'Widget',
    );
    void start();
    events.create(widget('w'));
    await clock.advance(1_000);
    expect(seen).toEqual([
      [0, undefined],
      [1, 'patch-owed'],
      [2, 'patch-owed'],
    ]);
  });

  it('a thrown RequeueAfterError is a requeue (attempt kept, not reported); a TerminalError is reported and never retried', async () => {
    const reported: string[] = [];
    const { controller, events, clock, start } = setup({
      retryPolicy: linearRetryPolicy(10),
      onError: (error, info) => reported.push(`${error.constructor.name}#${info.attempt}:${info.retryInMs}`),
    });
    const seen: string[] = [];
    let calls = 0;
    controller.addReconciler(
      {
        reconcile(_request, { attempt }) {
          seen.push(`${attempt}@${clock.now()}`);
          calls++;
          if (calls === 1) throw new RequeueAfterError(2_000, 'not ready', { cause: new Error('pending') });
          throw new TerminalError('bad spec');
        },
      },
      'Widget',
    );
    void start();
    events.create(widget('w'));
    await clock.advance(60_000);
    expect(seen).toEqual(['0@0', '0@2000']);
    expect(reported).toEqual(['TerminalError#0:undefined']);
  });

  it('an invalid result is an InvalidReconcileResultError, reported and retried', async () => {
    const errors: Error[] = [];
    const { controller, events, clock, start } = setup({
      retryPolicy: linearRetryPolicy(10, 1),
      onError: (error) => errors.push(error),
    });
    let calls = 0;
    controller.addReconciler(
      {
        reconcile: () => {
          calls++;
          return { requeueAfterMs: -1 } as ReconcileResult;
        },
      },
      'Widget',
    );
    void start();
    events.create(widget('w'));
    await clock.advance(1_000);
    expect(calls).toBe(2);
    expect(errors).toHaveLength(2);
    expect(errors[0]).toBeInstanceOf(InvalidReconcileResultError);
    expect((errors[0] as InvalidReconcileResultError).code).toBe('CONVERGE_ERR_WATCHER_INVALID_RESULT');
  });

  it('a new event drops a pending requeue even when the dequeue policy would keep a retry', async () => {
    const { controller, events, clock, start } = setup({ retryDequeuePolicy: opinionatedRetryDequeuePolicy });
    const seen: string[] = [];
    controller.addReconciler<Widget, unknown>(
      {
        reconcile({ action, object }) {
          seen.push(`${action}:${object.spec.tag}@${clock.now()}`);
          return action === 'create' ? { requeueAfterMs: 1_000 } : undefined;
        },
      },
      'Widget',
    );
    void start();
    events.create(widget('w', { tag: 'v1' }));
    await clock.advance(500);
    events.update(widget('w', { rv: '1' }), widget('w', { rv: '2', tag: 'v2' }));
    await clock.advance(10_000);
    expect(seen).toEqual(['create:v1@0', 'update:v2@500']);
  });
});
