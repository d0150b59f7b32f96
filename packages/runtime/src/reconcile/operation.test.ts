import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Cause } from '../workqueue/index.ts';
import { operationOf } from './operation.ts';

const put: Cause = { type: 'modified', source: 'kv' };
const added: Cause = { type: 'added', source: 'kv', initialList: true };
const resync: Cause = { type: 'resync', source: 'kv' };
const deleted: Cause = { type: 'deleted', source: 'kv' };
const purged: Cause = { type: 'deleted', source: 'kv', purged: true };
const secondary: Cause = { type: 'modified', source: 'pods', secondary: true };
const secondaryDelete: Cause = { type: 'deleted', source: 'pods', secondary: true };

describe('operationOf (Kumori Put / Delete / Purge / Secondary)', () => {
  it('a KV put, delete or purge of the primary is put, delete or purge', () => {
    expect(operationOf([put])).toBe('put');
    expect(operationOf([added])).toBe('put');
    expect(operationOf([resync])).toBe('put');
    expect(operationOf([deleted])).toBe('delete');
    expect(operationOf([purged])).toBe('purge');
  });

  it('the latest cause about the primary decides, whatever secondaries did after it', () => {
    expect(operationOf([put, deleted])).toBe('delete');
    expect(operationOf([deleted, added])).toBe('put');
    expect(operationOf([put, purged, secondary])).toBe('purge');
    expect(operationOf([purged, { type: 'retry' }])).toBe('purge');
  });

  it('only secondary causes make it secondary, a deleted secondary included', () => {
    expect(operationOf([secondary])).toBe('secondary');
    expect(operationOf([secondaryDelete, { type: 'requeue-after' }])).toBe('secondary');
  });

  it('nothing tells without an event about the primary or a secondary: requeues, retries, manual, generic, none', () => {
    expect(operationOf([])).toBeUndefined();
    expect(
      operationOf([{ type: 'manual' }, { type: 'requeue-after' }, { type: 'retry' }, { type: 'requeue' }]),
    ).toBeUndefined();
    expect(operationOf([{ type: 'generic', source: 'kv' }])).toBeUndefined();
  });

  it('is the operation of the last primary event in any list of causes', () => {
    const causeArb = fc.constantFrom<Cause>(put, added, resync, deleted, purged, secondary, secondaryDelete, {
      type: 'retry',
    });
    fc.assert(
      fc.property(fc.array(causeArb, { maxLength: 10 }), (causes) => {
        const primary = causes.filter((c) => c.secondary !== true && c.type !== 'retry');
        const last = primary.at(-1);
        const expected =
          last === undefined
            ? causes.some((c) => c.secondary === true)
              ? 'secondary'
              : undefined
            : last.type === 'deleted'
              ? last.purged === true
                ? 'purge'
                : 'delete'
              : 'put';
        expect(operationOf(causes)).toBe(expected);
      }),
    );
  });
});
