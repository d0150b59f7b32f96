import { describe, expect, it } from 'vitest';
import { widget } from './informer-controller-test-support.ts';
import {
  defaultWatcherRetryPolicy,
  generationOf,
  opinionatedRetryDequeuePolicy,
} from './retry-dequeue-policy.ts';
import type { PendingRetry, ResourceAction } from './types.ts';

const ACTIONS: readonly ResourceAction[] = ['create', 'update', 'delete', 'resync'];

function pending(action: ResourceAction, generation: number | string | undefined): PendingRetry {
  return {
    action,
    object: widget('w', generation === undefined ? {} : { generation }),
    error: new Error('failed'),
    attempts: 1,
  };
}

describe('opinionatedRetryDequeuePolicy', () => {
  it('statement 11: drops on a delete, keeps on another action, keeps on the same generation, drops on another — the whole table', () => {
    for (const newAction of ACTIONS) {
      for (const retryAction of ACTIONS) {
        for (const [newGeneration, retryGeneration] of [
          [1, 1],
          [1, 2],
        ] as const) {
          const drop = opinionatedRetryDequeuePolicy(
            newAction,
            widget('w', { generation: newGeneration }),
            pending(retryAction, retryGeneration),
          );
          const expected =
            newAction === 'delete'
              ? true
              : newAction !== retryAction
                ? false
                : newGeneration !== retryGeneration;
          expect([newAction, retryAction, newGeneration, retryGeneration, drop]).toEqual([
            newAction,
            retryAction,
            newGeneration,
            retryGeneration,
            expected,
          ]);
        }
      }
    }
  });

  it('statement 11: the generation is a number or a numeric string, anything else counts as 0', () => {
    expect(generationOf(widget('w', { generation: 7 }))).toBe(7);
    expect(generationOf(widget('w', { generation: '7' }))).toBe(7);
    expect(generationOf(widget('w', { generation: '-3' }))).toBe(-3);
    expect(generationOf(widget('w', { generation: '7a' }))).toBe(0);
    expect(generationOf(widget('w', { generation: '' }))).toBe(0);
    expect(generationOf(widget('w'))).toBe(0);
    expect(generationOf({ metadata: { generation: true } })).toBe(0);
    expect(generationOf({ metadata: { generation: Number.NaN } })).toBe(0);
    expect(generationOf(null)).toBe(0);
    // A numeric string and a number of the same value are the same generation; a missing one is 0.
    expect(
      opinionatedRetryDequeuePolicy('update', widget('w', { generation: '4' }), pending('update', 4)),
    ).toBe(false);
    expect(opinionatedRetryDequeuePolicy('update', widget('w'), pending('update', 'x'))).toBe(false);
    expect(opinionatedRetryDequeuePolicy('update', widget('w'), pending('update', 1))).toBe(true);
  });
});

describe('defaultWatcherRetryPolicy', () => {
  it("is app-sdk's DefaultRetryPolicy: retries after 5, 10, 20, 40, 80 and 160 s, then gives up (7 calls)", () => {
    const decisions = [0, 1, 2, 3, 4, 5, 6].map((failures) =>
      defaultWatcherRetryPolicy.decide({ failures, error: new Error('x') }),
    );
    expect(decisions).toEqual([
      { retry: true, delayMs: 5_000 },
      { retry: true, delayMs: 10_000 },
      { retry: true, delayMs: 20_000 },
      { retry: true, delayMs: 40_000 },
      { retry: true, delayMs: 80_000 },
      { retry: true, delayMs: 160_000 },
      { retry: false },
    ]);
  });
});
