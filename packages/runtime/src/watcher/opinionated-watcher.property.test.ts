import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConflictError } from '../backend/index.ts';
import { hasFinalizer, isBeingDeleted } from '../client/index.ts';
import type { Clock } from '../clock/index.ts';
import type { KubeObject } from '../object/index.ts';
import { context, FINAL, MockPatchClient, WIP, widget, widgetType } from './opinionated-test-support.ts';
import { OpinionatedWatcher } from './opinionated-watcher.ts';
import type { ResourceWatcher } from './types.ts';

/** Sleeps end at once: conflict retries happen, their timing is not what this test is about. */
const instantClock: Clock = {
  now: () => 0,
  setTimer: (callback) => {
    queueMicrotask(callback);
    return { cancel() {} };
  },
  sleep: () => Promise.resolve(),
  random: () => 0.5,
};

type Step =
  | { readonly kind: 'deliver' }
  | { readonly kind: 'retry' }
  | { readonly kind: 'restart' }
  | { readonly kind: 'specChange' }
  | { readonly kind: 'statusChange' }
  | { readonly kind: 'userDelete' }
  | { readonly kind: 'otherFinalizer'; readonly add: boolean }
  | { readonly kind: 'conflict' };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'deliver' as const }) },
  { weight: 3, arbitrary: fc.constant({ kind: 'retry' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'restart' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'specChange' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'statusChange' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'userDelete' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('otherFinalizer' as const), add: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'conflict' as const }) },
);

type Call =
  | { readonly kind: 'add'; readonly object: KubeObject }
  | { readonly kind: 'update'; readonly oldObject: KubeObject; readonly object: KubeObject }
  | { readonly kind: 'delete'; readonly object: KubeObject };

const OTHER = 'other.example.com/x';
const ours = (object: KubeObject): boolean => hasFinalizer(object, FINAL) || hasFinalizer(object, WIP);

/**
 * One object's life under an informer-controller-like driver: events queue up as the store
 * changes, are delivered one at a time, a failed call may be retried later, and a new event drops
 * the pending retry (the default retry-dequeue policy) unless `keepRetries`. Handlers fail as
 * `outcomes` say. Throws (failing the property) when a safety rule breaks.
 */
async function run(
  steps: readonly Step[],
  outcomes: readonly boolean[],
  inProgress: boolean,
  keepRetries: boolean,
): Promise<void> {
  const client = new MockPatchClient(undefined);
  const queue: Call[] = [];
  let pending: Call | undefined;
  let outcome = 0;
  let addCalled = false;
  let deleteSucceeded = false;
  let userDeleted = false;
  let touched = 0;

  client.onChange = (oldObject, object) => {
    const removed = client.stored === undefined;
    if (oldObject !== undefined && ours(oldObject) && (removed || object === undefined || !ours(object))) {
      // Rule 1: our last finalizer goes only after a successful delete handler.
      if (!deleteSucceeded) throw new Error('a finalizer of ours was removed before a successful delete');
    }
    if (removed && inProgress && addCalled && !deleteSucceeded) {
      // Rule 3 (the in-progress finalizer's promise): an object whose add ran is never gone without a delete.
      throw new Error('an object whose add was called went away without a successful delete');
    }
    if (oldObject === undefined) queue.push({ kind: 'add', object: object as KubeObject });
    else if (removed || object === undefined) queue.push({ kind: 'delete', object: oldObject });
    else queue.push({ kind: 'update', oldObject, object });
  };

  const handlers: ResourceWatcher = {
    add: () => {
      addCalled = true;
      if (outcomes[outcome++] === false) throw new Error('add failed');
    },
    update: () => {
      if (outcomes[outcome++] === false) throw new Error('update failed');
    },
    sync: () => {
      if (outcomes[outcome++] === false) throw new Error('sync failed');
    },
    delete: (object) => {
      // Rule 2: delete only for an object being deleted that carries a finalizer of ours.
      if (!ours(object) || !isBeingDeleted(object))
        throw new Error('delete called for an object not ours to finish');
      if (outcomes[outcome++] === false) throw new Error('delete failed');
      deleteSucceeded = true;
    },
  };
  const newWatcher = (): OpinionatedWatcher =>
    new OpinionatedWatcher({
      type: widgetType,
      client,
      handlers,
      clock: instantClock,
      ...(inProgress ? {} : { inProgressFinalizer: false as const }),
    });
  let watcher = newWatcher();

  const invoke = async (call: Call): Promise<boolean> => {
    try {
      if (call.kind === 'add') await watcher.add(call.object, context());
      else if (call.kind === 'update') await watcher.update(call.oldObject, call.object, context());
      else watcher.delete(call.object, context());
      return true;
    } catch (error) {
      if (/not ours|before a successful|went away/.test((error as Error).message)) throw error;
      return false;
    }
  };
  const deliver = async (): Promise<void> => {
    const call = queue.shift();
    if (call === undefined) return;
    if (!keepRetries) pending = undefined;
    if (!(await invoke(call))) pending = call;
  };
  const retry = async (): Promise<void> => {
    const call = pending;
    pending = undefined;
    if (call !== undefined && !(await invoke(call))) pending = call;
  };
  const restart = (): void => {
    watcher = newWatcher();
    queue.length = 0;
    pending = undefined;
    if (client.stored !== undefined) queue.push({ kind: 'add', object: client.stored });
  };
  const change = (mutate: (object: KubeObject) => KubeObject | undefined): void => {
    const current = client.stored;
    if (current === undefined) return;
    const next = mutate(current);
    if (next !== undefined) client.write(next);
  };

  client.write(widget({ resourceVersion: '0' }));
  for (const s of steps) {
    switch (s.kind) {
      case 'deliver':
        await deliver();
        break;
      case 'retry':
        await retry();
        break;
      case 'restart':
        restart();
        break;
      case 'specChange':
        change((o) => ({ ...o, metadata: { ...o.metadata, generation: (o.metadata.generation ?? 0) + 1 } }));
        break;
      case 'statusChange':
        touched++;
        change((o) => ({ ...o, metadata: { ...o.metadata, labels: { touched: String(touched) } } }));
        break;
      case 'userDelete':
        userDeleted = userDeleted || client.stored !== undefined;
        client.deleteObject();
        break;
      case 'otherFinalizer':
        change((o) => {
          const has = hasFinalizer(o, OTHER);
          if (s.add === has || (s.add && isBeingDeleted(o))) return undefined;
          const finalizers = o.metadata.finalizers ?? [];
          return {
            ...o,
            metadata: {
              ...o.metadata,
              finalizers: s.add ? [...finalizers, OTHER] : finalizers.filter((f) => f !== OTHER),
            },
          };
        });
        break;
      case 'conflict':
        client.fail('patch', new ConflictError('conflict'));
        break;
    }
  }

  // Drain: the other controller lets go, the operator restarts (a relist), every handler succeeds.
  outcome = outcomes.length;
  change((o) =>
    hasFinalizer(o, OTHER)
      ? {
          ...o,
          metadata: { ...o.metadata, finalizers: (o.metadata.finalizers ?? []).filter((f) => f !== OTHER) },
        }
      : undefined,
  );
  restart();
  for (let i = 0; i < 100 && (queue.length > 0 || pending !== undefined); i++) {
    if (pending !== undefined) await retry();
    else await deliver();
  }
  // Liveness: a deleted object is gone after a successful delete; a live one carries the finalizer only.
  if (userDeleted) {
    expect(client.stored).toBeUndefined();
  } else {
    expect(client.stored?.metadata.finalizers).toEqual([FINAL]);
  }
}

describe('OpinionatedWatcher properties', () => {
  for (const inProgress of [true, false]) {
    it(`random events and handler outcomes never remove the finalizer before a successful delete, never call delete for an object without ours, and settle (in-progress finalizer ${inProgress ? 'on' : 'off'})`, async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(step, { maxLength: 40 }),
          fc.array(fc.boolean(), { maxLength: 30 }),
          fc.boolean(),
          async (steps, outcomes, keepRetries) => {
            await run(steps, outcomes, inProgress, keepRetries);
          },
        ),
        { numRuns: 300 },
      );
    });
  }
});
