import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock/virtual-clock.ts';
import type { Cause, CauseWriter } from '../workqueue/index.ts';
import { WriteLedger } from './write-ledger.ts';
import { runAsWriter } from './writer-scope.ts';

const writer: CauseWriter = { controller: 'c', reconcileId: 'c-1', key: 'ns/a', causes: [] };
const object = (rv: string, uid = 'u1') => ({
  kind: 'Widget',
  metadata: { namespace: 'ns', name: 'a', uid, resourceVersion: rv },
});
const modified = (rv: string, uid = 'u1'): Cause => ({
  type: 'modified',
  object: { kind: 'Widget', namespace: 'ns', name: 'a', uid, resourceVersion: rv },
});

describe('WriteLedger', () => {
  it('names the writer of the echo of a remembered version only: modified, deleted and live added causes', () => {
    const ledger = new WriteLedger({ clock: new VirtualClock() });
    ledger.record(object('5'), writer);
    expect(ledger.attribute(modified('5')).writtenBy).toBe(writer);
    expect(ledger.attribute(modified('6')).writtenBy).toBeUndefined();
    expect(ledger.attribute(modified('5', 'u2')).writtenBy).toBeUndefined();
    expect(ledger.attribute({ ...modified('5'), type: 'deleted' }).writtenBy).toBe(writer);
    expect(ledger.attribute({ ...modified('5'), type: 'added' }).writtenBy).toBe(writer);
    // A resync or an initial list replays the object: not an echo.
    expect(ledger.attribute({ ...modified('5'), type: 'resync' }).writtenBy).toBeUndefined();
    expect(
      ledger.attribute({ ...modified('5'), type: 'added', initialList: true }).writtenBy,
    ).toBeUndefined();
    const unattributed = modified('7');
    expect(ledger.attribute(unattributed)).toBe(unattributed);
  });

  it('forgets a write after ttlMs, keeps the last 4 versions of an object, and at most maxEntries objects', async () => {
    const clock = new VirtualClock();
    const ledger = new WriteLedger({ clock, ttlMs: 1_000, maxEntries: 2 });
    ledger.record(object('1'), writer);
    await clock.advance(1_000);
    expect(ledger.attribute(modified('1')).writtenBy).toBe(writer);
    await clock.advance(1);
    expect(ledger.attribute(modified('1')).writtenBy).toBeUndefined();
    for (let rv = 2; rv <= 10; rv++) ledger.record(object(String(rv)), writer);
    expect(ledger.attribute(modified('6')).writtenBy).toBeUndefined();
    expect(ledger.attribute(modified('7')).writtenBy).toBe(writer);
    expect(ledger.attribute(modified('10')).writtenBy).toBe(writer);
    ledger.record(object('1', 'u2'), writer);
    await clock.advance(1);
    ledger.record(object('1', 'u3'), writer);
    expect(ledger.size).toBe(2);
    expect(ledger.attribute(modified('10')).writtenBy).toBeUndefined();
    expect(ledger.attribute(modified('1', 'u3')).writtenBy).toBe(writer);
  });

  it('records what is written inside runAsWriter, through async steps, and nothing outside', async () => {
    const { currentWriter, recordWrite } = await import('./writer-scope.ts');
    const ledger = new WriteLedger({ clock: new VirtualClock() });
    recordWrite(object('1'), currentWriter());
    await runAsWriter({ ledger, writer: () => writer }, async () => {
      await Promise.resolve();
      recordWrite(object('2'), currentWriter());
    });
    expect(ledger.size).toBe(1);
    expect(ledger.attribute(modified('2')).writtenBy).toBe(writer);
  });

  it("a worker's cell names the run it is set for, through async steps; a write issued before the scope changes keeps the scope it was issued in", async () => {
    const { currentWriter, recordWrite, runInWriterCell, WriterCell } = await import('./writer-scope.ts');
    const ledger = new WriteLedger({ clock: new VirtualClock() });
    const other = { controller: 'c', reconcileId: 'c-2', key: 'default/b', causes: [] };
    const cell = new WriterCell();
    await runInWriterCell(cell, async () => {
      cell.scope = { ledger, writer: () => writer };
      await Promise.resolve();
      const issued = currentWriter(); // a write issued now, answered after the run ended
      cell.scope = undefined;
      recordWrite(object('3'), currentWriter());
      cell.scope = { ledger, writer: () => other };
      await Promise.resolve();
      recordWrite(object('4'), currentWriter());
      recordWrite(object('2'), issued);
    });
    expect(ledger.attribute(modified('2')).writtenBy).toBe(writer);
    expect(ledger.attribute(modified('3')).writtenBy).toBeUndefined();
    expect(ledger.attribute(modified('4')).writtenBy).toBe(other);
  });
});

describe('WriteLedger.attribute', () => {
  it('gives the same copy of a cause every time (a retried run keeps its causes, observers key on them)', () => {
    const ledger = new WriteLedger({ clock: new VirtualClock() });
    ledger.record(object('5'), writer);
    const cause = modified('5');
    const first = ledger.attribute(cause);
    expect(first).not.toBe(cause);
    expect(ledger.attribute(cause)).toBe(first);
    expect(ledger.attributeSet({ causes: [cause], dropped: 0 }).causes[0]).toBe(first);
  });
});

describe('WriteLedger versions', () => {
  it('a write answered after a later one (two in flight) is still named; an edit after both is not', () => {
    const ledger = new WriteLedger({ clock: new VirtualClock() });
    const second = { ...writer, reconcileId: 'c-2' };
    ledger.record(object('12'), second);
    ledger.record(object('11'), writer);
    expect(ledger.writerOf(modified('12').object ?? {})).toBe(second);
    expect(ledger.writerOf(modified('11').object ?? {})).toBe(writer);
    expect(ledger.writerOf(modified('13').object ?? {})).toBeUndefined();
  });

  it('names the newest writer of the version among the last 4 written, whatever the versions look like', () => {
    // Decimal revisions in and out of order, with leading zeros and of other lengths, and opaque
    // ones: the ledger skips the older versions for a revision past every write, and must never
    // skip one it holds. A few versions come often, so that one is written again (a write that
    // changes nothing returns the version it had) while older copies of it are still kept.
    const rv = fc.oneof(
      fc.integer({ min: 0, max: 120 }).map(String),
      { weight: 4, arbitrary: fc.constantFrom('1', '2', '3') },
      fc.integer({ min: 0, max: 120 }).map((n) => String(n).padStart(3, '0')),
      fc.constantFrom('', 'a', 'b7', '9z', '1e3'),
    );
    const op = fc.oneof(
      fc.record({ write: rv, uid: fc.constantFrom('u1', 'u2') }),
      fc.record({ read: rv, uid: fc.constantFrom('u1', 'u2') }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const ledger = new WriteLedger({ clock: new VirtualClock() });
        const kept = new Map<string, { rv: string; writer: CauseWriter }[]>();
        ops.forEach((o, i) => {
          if ('write' in o) {
            const w = { ...writer, reconcileId: `c-${i}` };
            ledger.record(object(o.write, o.uid), w);
            if (o.write === '') return;
            const versions = kept.get(o.uid) ?? [];
            versions.push({ rv: o.write, writer: w });
            if (versions.length > 4) versions.shift();
            kept.set(o.uid, versions);
            return;
          }
          const expected = (kept.get(o.uid) ?? []).findLast((v) => v.rv === o.read)?.writer;
          expect(ledger.writerOf(modified(o.read, o.uid).object ?? {}), `${o.read} of ${o.uid}`).toBe(
            expected,
          );
        });
      }),
      // Saturated: out-of-order, padded and opaque revisions meet within the first ~200 cases.
      { numRuns: 500 },
    );
  });
});
