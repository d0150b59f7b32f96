import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { AbortedError, ErrorCodes } from '../errors.ts';
import type { ObjectEvent } from '../event/index.ts';
import { MemoryLogger } from '../log/index.ts';
import { DuplicateKeyError, ListFailedError, ListTimeoutError } from './errors.ts';
import { Poller } from './poller.ts';
import type { PollerOptions } from './poller-options.ts';

interface Item {
  readonly id: string;
  readonly v: number;
}

type Step = readonly Item[] | Error | 'hang' | { readonly delayMs: number; readonly items: readonly Item[] };

/** A list function that plays `steps` in order (the last one repeats) and records each call. */
function scripted(clock: VirtualClock, steps: Step[]) {
  const calls: { at: number; signal: AbortSignal }[] = [];
  const list = async (signal: AbortSignal): Promise<readonly Item[]> => {
    calls.push({ at: clock.now(), signal });
    const step = steps[Math.min(calls.length - 1, steps.length - 1)] as Step;
    if (step instanceof Error) throw step;
    if (step === 'hang') return new Promise<never>(() => {});
    if (!Array.isArray(step)) {
      const { delayMs, items } = step as { delayMs: number; items: readonly Item[] };
      await clock.sleep(delayMs);
      return items;
    }
    return step;
  };
  return { list, calls, at: () => calls.map((c) => c.at) };
}

function setup(steps: Step[], options: Partial<PollerOptions<Item>> = {}) {
  const clock = new VirtualClock();
  const logger = new MemoryLogger();
  const script = scripted(clock, steps);
  const poller = new Poller<Item>({
    list: script.list,
    keyOf: (item) => item.id,
    intervalMs: 1000,
    jitterFactor: 0,
    clock,
    logger,
    ...options,
  });
  const events: ObjectEvent<Item>[] = [];
  poller.subscribe((e) => events.push(e));
  const stop = new AbortController();
  const run = poller.start(stop.signal);
  const finish = async (): Promise<void> => {
    stop.abort();
    await run;
  };
  return { clock, logger, script, poller, events, stop, run, finish };
}

const a1 = { id: 'a', v: 1 };
const a2 = { id: 'a', v: 2 };
const b1 = { id: 'b', v: 1 };
const c1 = { id: 'c', v: 1 };

describe('Poller timing', () => {
  it('polls as soon as it starts', async () => {
    const t = setup([[a1]]);
    await t.clock.advance(0);
    expect(t.script.at()).toEqual([0]);
    await t.finish();
  });

  it('polls at a fixed rate: the next poll starts an interval after the previous one started', async () => {
    const t = setup([{ delayMs: 300, items: [a1] }]);
    await t.clock.advance(3500);
    expect(t.script.at()).toEqual([0, 1000, 2000, 3000]);
    await t.finish();
  });

  it('a poll that takes longer than the interval is followed at once by the next', async () => {
    const t = setup([{ delayMs: 1500, items: [a1] }], { timeoutMs: 5000 });
    await t.clock.advance(3000);
    expect(t.script.at()).toEqual([0, 1500, 3000]);
    await t.finish();
  });

  it('jitter lengthens each interval by up to jitterFactor of it, deterministically on the virtual clock', async () => {
    const t = setup([[a1]], { jitterFactor: 0.5 });
    await t.clock.advance(10_000);
    const gaps = t.script
      .at()
      .slice(1)
      .map((at, i) => at - (t.script.at()[i] as number));
    expect(gaps.length).toBeGreaterThan(5);
    for (const gap of gaps) {
      expect(gap).toBeGreaterThanOrEqual(1000);
      expect(gap).toBeLessThanOrEqual(1500);
    }
    expect(new Set(gaps).size).toBeGreaterThan(1);
    await t.finish();
  });

  it('the defaults poll every 30 s plus up to 10 % jitter', async () => {
    const clock = new VirtualClock();
    const script = scripted(clock, [[a1]]);
    const poller = new Poller<Item>({ list: script.list, keyOf: (i) => i.id, clock });
    const stop = new AbortController();
    const run = poller.start(stop.signal);
    await clock.advance(29_999);
    expect(script.calls).toHaveLength(1);
    await clock.advance(3001);
    expect(script.calls).toHaveLength(2);
    expect(script.at()[1]).toBeGreaterThanOrEqual(30_000);
    expect(script.at()[1]).toBeLessThanOrEqual(33_000);
    stop.abort();
    await run;
  });

  it('a list that runs past timeoutMs is aborted with a ListTimeoutError and counts as failed', async () => {
    const t = setup(['hang'], { timeoutMs: 400, errorBackoffMs: 100 });
    await t.clock.advance(400);
    const first = t.script.calls[0]?.signal;
    expect(first?.aborted).toBe(true);
    expect(first?.reason).toBeInstanceOf(ListTimeoutError);
    expect(t.poller.stats()).toMatchObject({ failures: 1, consecutiveFailures: 1 });
    await t.clock.advance(100);
    expect(t.script.at()).toEqual([0, 500]);
    await t.finish();
  });

  it('the list timeout defaults to the interval', async () => {
    const t = setup(['hang'], { intervalMs: 700 });
    await t.clock.advance(699);
    expect(t.script.calls[0]?.signal.aborted).toBe(false);
    await t.clock.advance(1);
    expect(t.script.calls[0]?.signal.aborted).toBe(true);
    await t.finish();
  });

  it('failures back off exponentially up to the cap, and one success resets the backoff', async () => {
    const boom = new Error('down');
    const t = setup([boom, boom, boom, boom, [a1], boom, [a1]], {
      intervalMs: 10_000,
      errorBackoffMs: 100,
      maxErrorBackoffMs: 400,
    });
    await t.clock.advance(11_300);
    expect(t.script.at()).toEqual([0, 100, 300, 700, 1100, 11_100, 11_200]);
    const retries = t.logger.records
      .filter((r) => r.message === 'Poll failed')
      .map((r) => r.fields.retryInMs);
    expect(retries).toEqual([100, 200, 400, 400, 100]);
    await t.finish();
  });

  it('the error backoff defaults to 1 s doubling to 60 s', async () => {
    const t = setup([new Error('down')], { intervalMs: 1_000_000 });
    await t.clock.advance(200_000);
    const gaps = t.script
      .at()
      .slice(1)
      .map((at, i) => at - (t.script.at()[i] as number));
    expect(gaps.slice(0, 8)).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000]);
    await t.finish();
  });
});

describe('Poller events', () => {
  it('the first successful poll emits initial-list creates in list order, then the poller is synced', async () => {
    const t = setup([[a1, b1]]);
    expect(t.poller.hasSynced()).toBe(false);
    await t.poller.waitForSync(new AbortController().signal);
    expect(t.events).toEqual([
      { type: 'create', object: a1, isInInitialList: true },
      { type: 'create', object: b1, isInInitialList: true },
    ]);
    expect(t.poller.hasSynced()).toBe(true);
    await t.finish();
  });

  it('later polls emit creates, updates with the old object, and deletes marked finalStateUnknown', async () => {
    const t = setup([
      [a1, b1],
      [a2, c1],
    ]);
    await t.clock.advance(0);
    t.events.length = 0;
    await t.clock.advance(1000);
    expect(t.events).toEqual([
      { type: 'update', oldObject: a1, object: a2 },
      { type: 'create', object: c1 },
      { type: 'delete', object: b1, finalStateUnknown: true },
    ]);
    await t.finish();
  });

  it('an unchanged result emits nothing', async () => {
    const t = setup([
      [a1, b1],
      [{ ...b1 }, { ...a1 }],
    ]);
    await t.clock.advance(5000);
    expect(t.events).toHaveLength(2);
    await t.finish();
  });

  it('with resync, every unchanged item emits a resync update on every poll', async () => {
    const t = setup([[a1], [{ ...a1 }]], { resync: true });
    await t.clock.advance(1000);
    expect(t.events[1]).toEqual({ type: 'update', oldObject: a1, object: a1, isResync: true });
    await t.finish();
  });

  it('the default version is deep equality, so key order and fresh objects do not count as changes', async () => {
    const t = setup([
      [{ id: 'a', v: 1, nested: { x: 1, y: 2 } } as Item],
      [{ nested: { y: 2, x: 1 }, v: 1, id: 'a' } as Item],
    ]);
    await t.clock.advance(1000);
    expect(t.events).toHaveLength(1);
    await t.finish();
  });

  it('a custom versionOf decides what is a change', async () => {
    const t = setup([[a1], [a2], [{ id: 'a', v: 12 }]], { versionOf: (i) => String(i.v % 10) });
    await t.clock.advance(2000);
    expect(t.events.map((e) => e.type)).toEqual(['create', 'update']);
    await t.finish();
  });

  it('items are frozen before they are handed out', async () => {
    const t = setup([[{ id: 'a', v: 1 }]]);
    await t.clock.advance(0);
    expect(Object.isFrozen(t.events[0]?.object)).toBe(true);
    expect(Object.isFrozen(t.poller.get('a'))).toBe(true);
    await t.finish();
  });

  it('get, list and stats read the current state', async () => {
    const t = setup([[a1, b1], [a2]]);
    await t.clock.advance(1000);
    expect(t.poller.get('a')).toEqual(a2);
    expect(t.poller.get('b')).toBeUndefined();
    expect(t.poller.list()).toEqual([a2]);
    expect(t.poller.stats()).toEqual({
      polls: 2,
      failures: 0,
      consecutiveFailures: 0,
      items: 1,
      events: 4,
      listenerErrors: 0,
    });
    await t.finish();
  });

  it('a listener that subscribes after sync first gets the current items as initial-list creates', async () => {
    const t = setup([[a1, b1]]);
    await t.clock.advance(0);
    const late: ObjectEvent<Item>[] = [];
    t.poller.subscribe((e) => late.push(e));
    expect(late).toEqual([
      { type: 'create', object: a1, isInInitialList: true },
      { type: 'create', object: b1, isInInitialList: true },
    ]);
    await t.finish();
  });

  it('a listener that throws is logged and counted, and the others and later polls carry on', async () => {
    const t = setup([[a1], [a2]]);
    t.poller.subscribe(() => {
      throw new Error('listener broke');
    });
    await t.clock.advance(1000);
    expect(t.events).toHaveLength(2);
    expect(t.poller.stats().listenerErrors).toBe(2);
    expect(t.logger.records.filter((r) => r.message === 'Poller listener failed')).toHaveLength(2);
    await t.finish();
  });
});

describe('Poller failures', () => {
  it('a failed list emits nothing, keeps the previous state and is logged with a ListFailedError', async () => {
    const boom = new Error('api down');
    const t = setup([[a1, b1], boom, [a1, c1]], { errorBackoffMs: 500 });
    await t.clock.advance(1000);
    expect(t.events).toHaveLength(2);
    expect(t.poller.list()).toEqual([a1, b1]);
    const failure = t.logger.records.find((r) => r.message === 'Poll failed')?.fields.err;
    expect(failure).toBeInstanceOf(ListFailedError);
    expect((failure as ListFailedError).cause).toBe(boom);
    await t.clock.advance(500);
    expect(t.events.slice(2)).toEqual([
      { type: 'create', object: c1 },
      { type: 'delete', object: b1, finalStateUnknown: true },
    ]);
    await t.finish();
  });

  it('a list that throws synchronously is a failed poll too', async () => {
    const clock = new VirtualClock();
    const logger = new MemoryLogger();
    const poller = new Poller<Item>({
      list: () => {
        throw new Error('sync throw');
      },
      keyOf: (i) => i.id,
      clock,
      logger,
    });
    const stop = new AbortController();
    const run = poller.start(stop.signal);
    await clock.advance(0);
    expect(poller.stats().failures).toBe(1);
    stop.abort();
    await expect(run).resolves.toBeUndefined();
  });

  it('a list with a duplicate key fails as a whole with a DuplicateKeyError and emits nothing', async () => {
    const t = setup([[a1], [a2, { id: 'a', v: 3 }, c1]]);
    await t.clock.advance(1000);
    expect(t.events).toHaveLength(1);
    expect(t.poller.get('a')).toEqual(a1);
    const failure = t.logger.records.find((r) => r.message === 'Poll failed')?.fields.err;
    expect(failure).toBeInstanceOf(DuplicateKeyError);
    expect(failure).toMatchObject({ key: 'a', code: ErrorCodes.SOURCE_DUPLICATE_KEY });
    await t.finish();
  });

  it('a result that is not an array, a throwing keyOf and a non-string key are failed polls', async () => {
    for (const [steps, keyOf] of [
      [[{ items: 'nope' } as unknown as Item[]], (i: Item) => i.id],
      [
        [[a1]],
        () => {
          throw new Error('keyOf broke');
        },
      ],
      [[[a1]], () => 42 as unknown as string],
    ] as [Step[], (i: Item) => string][]) {
      const t = setup(steps, { keyOf });
      await t.clock.advance(0);
      expect(t.events).toEqual([]);
      expect(t.poller.stats().failures).toBe(1);
      expect(t.logger.records[0]?.fields.err).toBeInstanceOf(ListFailedError);
      await t.finish();
    }
  });

  it('an item the default version cannot serialise fails the poll', async () => {
    const t = setup([[{ id: 'a', v: 1, big: 1n } as unknown as Item]]);
    await t.clock.advance(0);
    expect(t.poller.stats().failures).toBe(1);
    expect(t.poller.hasSynced()).toBe(false);
    await t.finish();
  });

  it('start never rejects for list errors and resolves when its signal aborts', async () => {
    const t = setup([new Error('down')]);
    await t.clock.advance(10_000);
    t.stop.abort();
    await expect(t.run).resolves.toBeUndefined();
    expect(t.clock.pendingTimers).toBe(0);
  });

  it('stopping aborts the list in flight, and its late result emits nothing', async () => {
    const t = setup([{ delayMs: 500, items: [a1] }]);
    await t.clock.advance(100);
    t.stop.abort();
    await t.run;
    expect(t.script.calls[0]?.signal.aborted).toBe(true);
    await t.clock.advance(1000);
    expect(t.events).toEqual([]);
    expect(t.script.calls).toHaveLength(1);
  });
});

describe('Poller sync and lifecycle', () => {
  it('until a poll succeeds it is not synced, and the first success after failures syncs it', async () => {
    const t = setup([new Error('down'), [a1]], { errorBackoffMs: 50 });
    await t.clock.advance(0);
    expect(t.poller.hasSynced()).toBe(false);
    await t.clock.advance(50);
    expect(t.poller.hasSynced()).toBe(true);
    expect(t.events).toEqual([{ type: 'create', object: a1, isInInitialList: true }]);
    await t.finish();
  });

  it('an empty first result syncs it without events', async () => {
    const t = setup([[]]);
    await t.clock.advance(0);
    expect(t.poller.hasSynced()).toBe(true);
    expect(t.events).toEqual([]);
    await t.finish();
  });

  it('waiting for sync rejects with an AbortedError when the poller stops before it synced', async () => {
    const t = setup([new Error('down')]);
    const synced = t.poller.waitForSync(new AbortController().signal);
    await t.clock.advance(5000);
    await t.finish();
    await expect(synced).rejects.toBeInstanceOf(AbortedError);
  });

  it('waiting for sync rejects with an AbortedError when the waiter’s signal aborts', async () => {
    const t = setup(['hang'], { timeoutMs: 100_000 });
    await expect(t.poller.waitForSync(AbortSignal.abort())).rejects.toBeInstanceOf(AbortedError);
    await t.finish();
  });

  it('a second start rejects with the already-started code', async () => {
    const t = setup([[a1]]);
    await expect(t.poller.start(new AbortController().signal)).rejects.toMatchObject({
      code: ErrorCodes.LIFECYCLE_ALREADY_STARTED,
    });
    await t.finish();
  });

  it('a poller started with an aborted signal never lists', async () => {
    const clock = new VirtualClock();
    const script = scripted(clock, [[a1]]);
    const poller = new Poller<Item>({ list: script.list, keyOf: (i) => i.id, clock });
    await poller.start(AbortSignal.abort());
    expect(script.calls).toEqual([]);
  });
});
