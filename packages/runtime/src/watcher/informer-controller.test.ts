import { describe, expect, it } from 'vitest';
import { OptionsError } from '../errors.ts';
import { EventChannel } from '../source/index.ts';
import { exponentialBackoffRetryPolicy, maxRetries, type RetryContext } from '../workqueue/index.ts';
import { InformerAlreadyAddedError } from './errors.ts';
import type { WatcherErrorInfo } from './informer-controller-options.ts';
import { linearRetryPolicy, setup, type Widget, widget } from './informer-controller-test-support.ts';
import { opinionatedRetryDequeuePolicy } from './retry-dequeue-policy.ts';
import type { PendingRetry, ResourceWatcher } from './types.ts';

/** A watcher that records every call (`add:<name>@<time>`) and fails while `fail` says so. */
function recorder(
  clock: { now(): number },
  calls: string[],
  fail: (method: string, object: Widget) => Error | undefined = () => undefined,
  prefix = '',
): ResourceWatcher<Widget> {
  const record = (method: string, object: Widget): void => {
    calls.push(`${prefix}${method}:${object.spec.tag}@${clock.now()}`);
    const error = fail(method, object);
    if (error !== undefined) throw error;
  };
  return {
    add: (object) => record('add', object),
    update: (_old, object) => record('update', object),
    delete: (object) => record('delete', object),
  };
}

const count = (calls: readonly string[], prefix: string): number =>
  calls.filter((c) => c.startsWith(prefix)).length;

describe('InformerController (grafana app-sdk v0.9.10 statements)', () => {
  it('statement 1: a missing watcher, informer or reconciler, or an empty kind, is an OptionsError', () => {
    const { controller, events } = setup();
    expect(() => controller.addWatcher(null as unknown as ResourceWatcher, 'Widget')).toThrow(OptionsError);
    expect(() => controller.addWatcher({}, '')).toThrow(OptionsError);
    expect(() => controller.addInformer(null as unknown as EventChannel<Widget>, 'Widget')).toThrow(
      OptionsError,
    );
    expect(() => controller.addInformer(events, '')).toThrow(OptionsError);
    expect(() => controller.addReconciler(undefined as never, 'Widget')).toThrow(OptionsError);
    expect(() => controller.addReconciler({ reconcile: () => undefined }, '')).toThrow(OptionsError);
    expect(() => controller.addWatcher({ add: 'nope' } as never, 'Widget')).toThrow(OptionsError);
  });

  it('statement 2: watchers run in add order, and each of several informers of a kind triggers all of them', async () => {
    const { controller, events, clock, start } = setup();
    const second = new EventChannel<Widget>();
    controller.addInformer(second, 'Widget');
    const calls: string[] = [];
    for (const name of ['a', 'b', 'c'])
      controller.addWatcher(recorder(clock, calls, undefined, `${name}.`), 'Widget');
    void start();
    events.create(widget('w'));
    second.create(widget('w'));
    await clock.advance(0);
    expect(calls).toEqual(['a.add:w@0', 'b.add:w@0', 'c.add:w@0', 'a.add:w@0', 'b.add:w@0', 'c.add:w@0']);
  });

  it('statement 2: the same informer added twice for a kind is an InformerAlreadyAddedError (ErrInformerAlreadyAdded); for another kind it is fine', () => {
    const { controller, events } = setup();
    const error = (() => {
      try {
        controller.addInformer(events, 'Widget');
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(InformerAlreadyAddedError);
    expect((error as InformerAlreadyAddedError).code).toBe('CONVERGE_ERR_WATCHER_INFORMER_ALREADY_ADDED');
    expect((error as InformerAlreadyAddedError).kind).toBe('Widget');
    expect(() => controller.addInformer(events, 'Gadget')).not.toThrow();
  });

  it('statement 3: removeWatcher removes the first equal watcher and keeps the order of the rest; unknown ones are a no-op', async () => {
    const { controller, events, clock, start } = setup();
    const calls: string[] = [];
    const one = recorder(clock, calls, undefined, '1.');
    const two = recorder(clock, calls, undefined, '2.');
    const three = recorder(clock, calls, undefined, '3.');
    for (const w of [one, two, three, one]) controller.addWatcher(w, 'Widget');
    expect(controller.removeWatcher(one, 'Widget')).toBe(true);
    expect(controller.removeWatcher(recorder(clock, calls), 'Widget')).toBe(false);
    expect(controller.removeWatcher(two, 'Gadget')).toBe(false);
    expect(controller.removeWatcher(two, '')).toBe(false);
    void start();
    events.create(widget('w'));
    await clock.advance(0);
    expect(calls).toEqual(['2.add:w@0', '3.add:w@0', '1.add:w@0']);
    controller.removeAllWatchersForResource('Widget');
    events.create(widget('v'));
    await clock.advance(0);
    expect(calls).toHaveLength(3);
  });

  it('statement 4 (fixed quirk): retries belong to the watcher, not its index — removing watcher 0 drops its retries and watcher 1 keeps its own', async () => {
    const { controller, events, clock, start } = setup({ retryPolicy: linearRetryPolicy(1_000) });
    const calls: string[] = [];
    const always = () => new Error('boom');
    const first = recorder(clock, calls, always, '0.');
    controller.addWatcher(first, 'Widget');
    controller.addWatcher(recorder(clock, calls, always, '1.'), 'Widget');
    void start();
    events.create(widget('w'));
    await clock.advance(500);
    controller.removeWatcher(first, 'Widget');
    expect(controller.stats().pendingRetries).toBe(1);
    await clock.advance(2_000);
    expect(calls).toEqual(['0.add:w@0', '1.add:w@0', '1.add:w@1000', '1.add:w@2000']);
  });

  it('statement 4: on failure the error handler is called, then the policy is asked with attempt 0 and a retry is queued at now + delay', async () => {
    const asked: number[] = [];
    const errors: [string, WatcherErrorInfo][] = [];
    const { controller, events, clock, start } = setup({
      retryPolicy: {
        name: 'spy',
        decide: ({ failures }: RetryContext) => {
          asked.push(failures);
          return failures < 1 ? { retry: true, delayMs: 700 } : { retry: false };
        },
      },
      onError: (error, info) => errors.push([error.message, info]),
    });
    const calls: string[] = [];
    controller.addWatcher(
      recorder(clock, calls, () => new Error('nope')),
      'Widget',
      { name: 'provisioner' },
    );
    void start();
    events.create(widget('w'));
    await clock.advance(10_000);
    expect(calls).toEqual(['add:w@0', 'add:w@700']);
    expect(asked).toEqual([0, 1]);
    expect(errors).toEqual([
      [
        'nope',
        {
          kind: 'Widget',
          handler: 'watcher',
          watcher: 'provisioner',
          action: 'create',
          key: { namespace: 'default', name: 'w' },
          attempt: 0,
          retryInMs: 700,
        },
      ],
      [
        'nope',
        {
          kind: 'Widget',
          handler: 'watcher',
          watcher: 'provisioner',
          action: 'create',
          key: { namespace: 'default', name: 'w' },
          attempt: 1,
          retryInMs: undefined,
        },
      ],
    ]);
  });

  it('statement 5: a failure in watcher i does not stop watchers i+1…, and only watcher i is retried', async () => {
    const { controller, events, clock, start } = setup({ retryPolicy: linearRetryPolicy(1_000, 1) });
    const calls: string[] = [];
    controller.addWatcher(recorder(clock, calls, undefined, 'a.'), 'Widget');
    controller.addWatcher(
      recorder(clock, calls, () => new Error('b fails'), 'b.'),
      'Widget',
    );
    controller.addWatcher(recorder(clock, calls, undefined, 'c.'), 'Widget');
    void start();
    events.update(widget('w', { rv: '1' }), widget('w', { rv: '2' }));
    await clock.advance(5_000);
    expect(calls).toEqual(['a.update:w@0', 'b.update:w@0', 'c.update:w@0', 'b.update:w@1000']);
  });

  it('statement 6 (fixed quirks): a retry makes the same call with the original objects at its exact time, asks the policy with attempt+1, keeps its error and reports every failure', async () => {
    const seen: PendingRetry[] = [];
    const reported: string[] = [];
    const asked: number[] = [];
    const { controller, events, clock, start } = setup({
      retryPolicy: {
        name: 'spy',
        decide: ({ failures }) => {
          asked.push(failures);
          return { retry: true, delayMs: 1_234 };
        },
      },
      retryDequeuePolicy: (_action, _object, retry) => {
        seen.push(retry);
        return true;
      },
      onError: (error, info) => reported.push(`${error.message}#${info.attempt}`),
    });
    const updates: [Widget, Widget, number, number][] = [];
    let n = 0;
    controller.addWatcher<Widget>(
      {
        update(oldObject, object, { attempt }) {
          updates.push([oldObject, object, attempt, clock.now()]);
          if (object.spec.tag === 'new') throw new Error(`e${n++}`);
        },
      },
      'Widget',
    );
    void start();
    const before = widget('w', { rv: '1', tag: 'old' });
    const after = widget('w', { rv: '2', tag: 'new' });
    events.update(before, after);
    await clock.advance(3 * 1_234);
    expect(updates.map(([o, w, attempt, at]) => [o === before, w === after, attempt, at])).toEqual([
      [true, true, 0, 0],
      [true, true, 1, 1_234],
      [true, true, 2, 2_468],
      [true, true, 3, 3_702],
    ]);
    expect(asked).toEqual([0, 1, 2, 3]);
    expect(reported).toEqual(['e0#0', 'e1#1', 'e2#2', 'e3#3']);
    events.update(after, widget('w', { rv: '3', tag: 'fine' }));
    await clock.advance(0);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.error?.message).toBe('e3');
    expect(seen[0]?.attempts).toBe(4);
    expect(seen[0]?.action).toBe('update');
    expect(seen[0]?.object).toBe(after);
  });

  it('statement 7: the default policy (5 s, 5) makes exactly 7 calls of an always-failing add, at 0, 5, 15, 35, 75, 155 and 315 s', async () => {
    const { controller, events, clock, start } = setup();
    const calls: string[] = [];
    controller.addWatcher(
      recorder(clock, calls, () => new Error('down')),
      'Widget',
    );
    void start();
    events.create(widget('w'));
    await clock.advance(3_600_000);
    expect(calls).toEqual([0, 5, 15, 35, 75, 155, 315].map((s) => `add:w@${s * 1_000}`));
    expect(controller.stats().pendingRetries).toBe(0);
  });

  it('statement 7: with (1 s, 5), an update at 10 s cancels the add retries: exactly 4 add calls and 4 update calls within 10 s of it', async () => {
    const { controller, events, clock, start } = setup({
      retryPolicy: exponentialBackoffRetryPolicy(1_000, 5),
    });
    const calls: string[] = [];
    controller.addWatcher(
      recorder(clock, calls, () => new Error('down')),
      'Widget',
    );
    void start();
    events.create(widget('w'));
    await clock.advance(10_000);
    events.update(widget('w', { rv: '1' }), widget('w', { rv: '2' }));
    await clock.advance(10_000);
    expect(calls).toEqual([
      'add:w@0',
      'add:w@1000',
      'add:w@3000',
      'add:w@7000',
      'update:w@10000',
      'update:w@11000',
      'update:w@13000',
      'update:w@17000',
    ]);
  });

  it('statement 8: without a dequeue policy, any new event for the same watcher and object cancels all its pending retries before it is handled', async () => {
    const { controller, events, clock, start } = setup({ retryPolicy: linearRetryPolicy(1_000) });
    const calls: string[] = [];
    controller.addWatcher(
      recorder(clock, calls, (method) => (method === 'add' ? new Error('add fails') : undefined)),
      'Widget',
    );
    void start();
    events.create(widget('w'));
    events.create(widget('other'));
    await clock.advance(3_500);
    events.update(widget('w', { rv: '1' }), widget('w', { rv: '2' }));
    await clock.advance(60_000);
    expect(count(calls, 'add:w@')).toBe(4);
    expect(count(calls, 'update:w@')).toBe(1);
    // The other object's retries were not touched by w's update.
    expect(count(calls, 'add:other@')).toBe(64);
  });

  it('statement 9: a retry that succeeds is not retried again (exactly 2 add and 2 update calls)', async () => {
    const { controller, events, clock, start } = setup({ retryPolicy: linearRetryPolicy(50) });
    const calls: string[] = [];
    const failed = new Set<string>();
    controller.addWatcher(
      recorder(clock, calls, (method) => {
        if (failed.has(method)) return undefined;
        failed.add(method);
        return new Error(`${method} fails once`);
      }),
      'Widget',
    );
    void start();
    events.create(widget('w'));
    await clock.advance(500);
    events.update(widget('w', { rv: '1' }), widget('w', { rv: '2' }));
    await clock.advance(500);
    expect(calls).toEqual(['add:w@0', 'add:w@50', 'update:w@500', 'update:w@550']);
  });

  it('statement 10: a policy that says no stops the retries (3 retries allowed → exactly 4 calls)', async () => {
    const infos: WatcherErrorInfo[] = [];
    const { controller, events, clock, start } = setup({
      retryPolicy: linearRetryPolicy(50, 3),
      onError: (_e, info) => infos.push(info),
    });
    const calls: string[] = [];
    controller.addWatcher(
      recorder(clock, calls, () => new Error('no')),
      'Widget',
    );
    void start();
    events.create(widget('w'));
    await clock.advance(10_000);
    expect(calls).toEqual(['add:w@0', 'add:w@50', 'add:w@100', 'add:w@150']);
    expect(infos.map((i) => i.retryInMs)).toEqual([50, 50, 50, undefined]);
  });

  it('statement 10: a policy that retries without a delay (maxRetries(2)) waits 5 ms · 2^attempt: calls at 0, 5 and 15 ms', async () => {
    const { controller, events, clock, start } = setup({ retryPolicy: maxRetries(2) });
    const calls: string[] = [];
    controller.addWatcher(
      recorder(clock, calls, () => new Error('no')),
      'Widget',
    );
    void start();
    events.create(widget('w'));
    await clock.advance(10_000);
    expect(calls).toEqual(['add:w@0', 'add:w@5', 'add:w@15']);
  });

  describe('statement 11: opinionatedRetryDequeuePolicy with a 500 ms linear policy of at most 7 retries', () => {
    const policy = linearRetryPolicy(500, 7);

    it('statement 11: a delete dequeues the pending add retries (4 add calls, not 8)', async () => {
      const { controller, events, clock, start } = setup({
        retryPolicy: policy,
        retryDequeuePolicy: opinionatedRetryDequeuePolicy,
      });
      const calls: string[] = [];
      controller.addWatcher(
        recorder(clock, calls, (method) => (method === 'add' ? new Error('x') : undefined)),
        'Widget',
      );
      void start();
      events.create(widget('w'));
      await clock.advance(1_750);
      events.delete(widget('w'));
      await clock.advance(60_000);
      expect(count(calls, 'add:')).toBe(4);
      expect(count(calls, 'delete:')).toBe(1);
    });

    it('statement 11: an update does not dequeue add retries (8 = 1 + 7 add calls)', async () => {
      const { controller, events, clock, start } = setup({
        retryPolicy: policy,
        retryDequeuePolicy: opinionatedRetryDequeuePolicy,
      });
      const calls: string[] = [];
      controller.addWatcher(
        recorder(clock, calls, (method) => (method === 'add' ? new Error('x') : undefined)),
        'Widget',
      );
      void start();
      events.create(widget('w', { generation: 1 }));
      await clock.advance(1_750);
      events.update(widget('w', { generation: 1, rv: '1' }), widget('w', { generation: 2, rv: '2' }));
      await clock.advance(60_000);
      expect(count(calls, 'add:')).toBe(8);
      expect(count(calls, 'update:')).toBe(1);
    });

    it('statement 11: an update with the same generation does not dequeue pending update retries (8 calls of the first)', async () => {
      const { controller, events, clock, start } = setup({
        retryPolicy: policy,
        retryDequeuePolicy: opinionatedRetryDequeuePolicy,
      });
      const calls: string[] = [];
      controller.addWatcher(
        recorder(clock, calls, (_m, object) => (object.spec.tag === 'first' ? new Error('x') : undefined)),
        'Widget',
      );
      void start();
      events.update(
        widget('w', { generation: 2, rv: '1' }),
        widget('w', { generation: 2, rv: '2', tag: 'first' }),
      );
      await clock.advance(1_750);
      events.update(
        widget('w', { generation: 2, rv: '2' }),
        widget('w', { generation: 2, rv: '3', tag: 'second' }),
      );
      await clock.advance(60_000);
      expect(count(calls, 'update:first@')).toBe(8);
      expect(count(calls, 'update:second@')).toBe(1);
    });

    it('statement 11: an update with a new generation dequeues pending update retries (4 calls of the first)', async () => {
      const { controller, events, clock, start } = setup({
        retryPolicy: policy,
        retryDequeuePolicy: opinionatedRetryDequeuePolicy,
      });
      const calls: string[] = [];
      controller.addWatcher(
        recorder(clock, calls, (_m, object) => (object.spec.tag === 'first' ? new Error('x') : undefined)),
        'Widget',
      );
      void start();
      events.update(
        widget('w', { generation: 2, rv: '1' }),
        widget('w', { generation: 2, rv: '2', tag: 'first' }),
      );
      await clock.advance(1_750);
      events.update(
        widget('w', { generation: 2, rv: '2' }),
        widget('w', { generation: '3', rv: '3', tag: 'second' }),
      );
      await clock.advance(60_000);
      expect(count(calls, 'update:first@')).toBe(4);
      expect(count(calls, 'update:second@')).toBe(1);
    });
  });

  it('statement 12: several pending retries of one object each keep their attempt count (7 adds and 7 updates)', async () => {
    const { controller, events, clock, start } = setup({
      retryPolicy: {
        name: 'six',
        decide: ({ failures }) => (failures >= 6 ? { retry: false } : { retry: true, delayMs: 450 }),
      },
      retryDequeuePolicy: opinionatedRetryDequeuePolicy,
    });
    const attempts: string[] = [];
    controller.addWatcher<Widget>(
      {
        add(_object, { attempt }) {
          attempts.push(`add#${attempt}`);
          throw new Error('add');
        },
        update(_old, _object, { attempt }) {
          attempts.push(`update#${attempt}`);
          throw new Error('update');
        },
      },
      'Widget',
    );
    void start();
    events.create(widget('w'));
    await clock.advance(2_300);
    expect(controller.stats().pendingRetries).toBe(1);
    events.update(widget('w', { rv: '1' }), widget('w', { rv: '2' }));
    await clock.advance(200);
    expect(controller.stats().pendingRetries).toBe(2);
    await clock.advance(60_000);
    expect(attempts.filter((a) => a.startsWith('add#'))).toEqual(
      [0, 1, 2, 3, 4, 5, 6].map((n) => `add#${n}`),
    );
    expect(attempts.filter((a) => a.startsWith('update#'))).toEqual(
      [0, 1, 2, 3, 4, 5, 6].map((n) => `update#${n}`),
    );
  });
});
