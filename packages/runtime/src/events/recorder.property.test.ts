import { Store } from '@converge/store';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Backend, UnavailableError } from '../backend/index.ts';
import { AbortedError } from '../errors.ts';
import type { KubeObject } from '../object/index.ts';
import { VirtualClock } from '../testing/index.ts';
import { createEventRecorder } from './backend-recorder.ts';
import { type EventsV1Event, eventsV1Type } from './event-types.ts';

type Mode = 'ok' | 'fail' | 'hang';
type Op =
  | { readonly kind: 'event'; readonly object: number; readonly reason: number; readonly note: number }
  | { readonly kind: 'advance'; readonly ms: number }
  | { readonly kind: 'mode'; readonly mode: Mode };

const opArb = (modes: readonly Mode[]): fc.Arbitrary<Op> =>
  fc.oneof(
    // Few keys, so repeats (series) and evictions (more keys than maxSeries) both happen often.
    {
      weight: 6,
      arbitrary: fc.record({
        kind: fc.constant('event' as const),
        object: fc.nat(2),
        reason: fc.nat(1),
        note: fc.nat(1),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('advance' as const),
        ms: fc.oneof({ weight: 3, arbitrary: fc.nat(2000) }, { weight: 1, arbitrary: fc.nat(400_000) }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('mode' as const), mode: fc.constantFrom(...modes) }),
    },
  );

/** The store, with writes that fail or hang while `mode()` says so. */
function switchable(store: Store, mode: () => Mode): Backend {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      if (property !== 'create' && property !== 'patch') return value.bind(target);
      return (...args: unknown[]) => {
        const now = mode();
        if (now === 'ok') return (value as (...a: unknown[]) => unknown).apply(target, args);
        if (now === 'fail') return Promise.reject(new UnavailableError('down'));
        const signal = (args.at(-1) as { signal?: AbortSignal } | undefined)?.signal;
        return new Promise((_resolve, reject) =>
          signal?.addEventListener('abort', () => reject(new AbortedError('aborted')), { once: true }),
        );
      };
    },
  });
}

const objects: KubeObject[] = Array.from({ length: 3 }, (_, i) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: `cm-${i}`, namespace: i % 2 === 0 ? 'a' : '', uid: `uid-${i}` },
}));

describe('event recorder properties', () => {
  it('keeps the buffer within maxBuffer and the series within maxSeries, and accounts for every call, whatever happens', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb(['ok', 'fail', 'hang']), { maxLength: 60 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 4 }),
        async (ops, maxBuffer, maxSeries, burst) => {
          const clock = new VirtualClock({ startMs: 1_700_000_000_000 });
          let mode: Mode = 'ok';
          const backend = switchable(new Store({ clock, types: [eventsV1Type] }), () => mode);
          const recorder = createEventRecorder({
            backend,
            component: 'c',
            clock,
            maxBuffer,
            maxSeries,
            burst,
          });
          let calls = 0;
          for (const op of ops) {
            if (op.kind === 'mode') mode = op.mode;
            else if (op.kind === 'advance') await clock.advance(op.ms);
            else {
              calls++;
              recorder.event(
                objects[op.object] as KubeObject,
                'Normal',
                `R${op.reason}`,
                'Act',
                `n${op.note}`,
              );
            }
            const s = recorder.stats();
            expect(s.buffered).toBeLessThanOrEqual(maxBuffer);
            expect(s.series).toBeLessThanOrEqual(maxSeries);
            expect(s.aggregated).toBeLessThanOrEqual(s.recorded);
            expect(s.recorded + s.dropped.rateLimit + s.dropped.buffer + s.dropped.invalid).toBe(calls);
          }
          mode = 'ok';
          const closed = recorder.close({ timeoutMs: 120_000 });
          await clock.advance(120_000);
          await closed;
          expect(recorder.stats().buffered).toBe(0);
          // Nothing is left running: no heartbeat, retry or close timer.
          expect(clock.pendingTimers).toBe(0);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('stores every recorded occurrence in exactly one Event when nothing is dropped', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb(['ok']), { maxLength: 80 }),
        fc.integer({ min: 1, max: 4 }),
        async (ops, maxSeries) => {
          const clock = new VirtualClock({ startMs: 1_700_000_000_000 });
          const store = new Store({ clock, types: [eventsV1Type] });
          const recorder = createEventRecorder({
            backend: store,
            component: 'c',
            clock,
            maxSeries,
            burst: 1000,
          });
          for (const op of ops) {
            if (op.kind === 'advance') await clock.advance(op.ms);
            else if (op.kind === 'event') {
              recorder.event(
                objects[op.object] as KubeObject,
                'Normal',
                `R${op.reason}`,
                'Act',
                `n${op.note}`,
              );
            }
          }
          const closed = recorder.close();
          await clock.advance(0);
          expect(await closed).toEqual({ flushed: true, abandoned: 0 });
          const events = (await store.list<EventsV1Event>(eventsV1Type)).items;
          const stored = events.reduce((sum, e) => sum + (e.series?.count ?? 1), 0);
          expect(stored).toBe(recorder.stats().recorded);
          expect(recorder.stats().recorded - recorder.stats().aggregated).toBe(events.length);
        },
      ),
      { numRuns: 150 },
    );
  });
});
