import { Store } from '@converge/store';
import { describe, expect, it } from 'vitest';
import {
  AlreadyExistsError,
  type Backend,
  ConflictError,
  ForbiddenError,
  TooManyRequestsError,
  UnavailableError,
} from '../backend/index.ts';
import { AbortedError } from '../errors.ts';
import type { LogFields, Logger } from '../log/index.ts';
import type { KubeObject } from '../object/index.ts';
import { MemoryLogger, VirtualClock } from '../testing/index.ts';
import { createEventRecorder } from './backend-recorder.ts';
import { coreEventType, type EventsV1Event, eventsV1Type } from './event-types.ts';
import type { EventRecorderOptions } from './options.ts';

const T0 = Date.UTC(2024, 4, 6, 7, 8, 9);
const web: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web', namespace: 'shop' } };

type Fault = Error | 'hang';

/**
 * The store behind a script of faults: each create or patch takes the next fault (an error to
 * reject with, or `hang`: never answer until aborted); with none left, it goes to the store.
 */
function faulty(store: Store, faults: Fault[]): { backend: Backend; writes: string[] } {
  const writes: string[] = [];
  const backend = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if ((property !== 'create' && property !== 'patch') || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        writes.push(String(property));
        const fault = faults.shift();
        if (fault === undefined) return (value as (...a: unknown[]) => unknown).apply(target, args);
        if (fault !== 'hang') return Promise.reject(fault);
        const signal = (args.at(-1) as { signal?: AbortSignal } | undefined)?.signal;
        return new Promise((_resolve, reject) =>
          signal?.addEventListener('abort', () => reject(new AbortedError('aborted')), { once: true }),
        );
      };
    },
  });
  return { backend, writes };
}

function setup(faults: Fault[], options: Partial<EventRecorderOptions> = {}) {
  const clock = new VirtualClock({ startMs: T0 });
  const store = new Store({ clock, types: [eventsV1Type, coreEventType] });
  const { backend, writes } = faulty(store, faults);
  const logger = new MemoryLogger();
  const recorder = createEventRecorder({ backend, component: 'c', clock, logger, ...options });
  const events = async (): Promise<EventsV1Event[]> => [
    ...(await store.list<EventsV1Event>(eventsV1Type)).items,
  ];
  return { clock, recorder, events, writes, logger, faults };
}

describe('event recorder on a failing backend', () => {
  it('retries an unavailable backend with doubling backoff on the clock, then writes', async () => {
    const down = (): Error => new UnavailableError('down');
    const { clock, recorder, events, writes } = setup([down(), down(), down()]);
    recorder.event(web, 'Normal', 'A', 'Reconcile', 'ok');
    await clock.advance(0);
    expect(writes).toHaveLength(1);
    await clock.advance(999);
    expect(writes).toHaveLength(1);
    await clock.advance(1);
    expect(writes).toHaveLength(2);
    await clock.advance(2000);
    expect(writes).toHaveLength(3);
    await clock.advance(3999);
    expect(await events()).toHaveLength(0);
    await clock.advance(1);
    expect(await events()).toHaveLength(1);
    expect(recorder.stats()).toMatchObject({ sent: 1, retries: 3, dropped: { error: 0 } });
  });

  it('waits at least a TooManyRequests Retry-After before the next try', async () => {
    const throttled = new TooManyRequestsError('slow down', { details: { retryAfterSeconds: 7 } });
    const { clock, recorder, writes } = setup([throttled]);
    recorder.event(web, 'Normal', 'A', 'Reconcile', 'ok');
    await clock.advance(6999);
    expect(writes).toHaveLength(1);
    await clock.advance(1);
    expect(writes).toHaveLength(2);
    expect(recorder.stats().sent).toBe(1);
  });

  it('re-applies a series update at once after a Conflict', async () => {
    const { clock, recorder, events, writes, faults } = setup([]);
    recorder.event(web, 'Normal', 'A', 'Reconcile', 'ok');
    await clock.advance(0);
    recorder.event(web, 'Normal', 'A', 'Reconcile', 'ok');
    faults.push(new ConflictError('the object has been modified'));
    await clock.advance(30_000);
    expect(writes).toEqual(['create', 'patch', 'patch']);
    expect((await events())[0]?.series?.count).toBe(2);
    expect(recorder.stats()).toMatchObject({ sent: 2, retries: 1 });
  });

  it('gives up after maxAttempts, logs CONVERGE_ERR_EVENTS_WRITE_FAILED and keeps going', async () => {
    const down = (): Error => new UnavailableError('down');
    const { clock, recorder, events, logger } = setup([down(), down(), down()], { maxAttempts: 3 });
    recorder.event(web, 'Normal', 'A', 'Reconcile', 'ok');
    await clock.advance(60_000);
    expect(recorder.stats()).toMatchObject({ sent: 0, retries: 2, dropped: { error: 1 } });
    const logged = logger.records.find((r) => r.message === 'Event dropped');
    expect(logged?.level).toBe('warn');
    expect(logged?.fields.err).toMatchObject({ code: 'CONVERGE_ERR_EVENTS_WRITE_FAILED', attempts: 3 });
    expect((logged?.fields.err as Error | undefined)?.cause).toBeInstanceOf(UnavailableError);
    recorder.event(web, 'Normal', 'B', 'Reconcile', 'ok');
    await clock.advance(0);
    expect((await events()).map((e) => e.reason)).toEqual(['B']);
  });

  it('drops at once on an error that retrying cannot fix', async () => {
    const { clock, recorder, writes } = setup([new ForbiddenError('no RBAC for events')]);
    recorder.event(web, 'Normal', 'A', 'Reconcile', 'ok');
    await clock.advance(60_000);
    expect(writes).toHaveLength(1);
    expect(recorder.stats()).toMatchObject({ retries: 0, dropped: { error: 1 } });
  });

  it('picks a new name when another writer took the name', async () => {
    const { clock, recorder, events, writes } = setup([new AlreadyExistsError('taken')]);
    recorder.event(web, 'Normal', 'A', 'Reconcile', 'ok');
    await clock.advance(0);
    expect(writes).toEqual(['create', 'create']);
    expect(await events()).toHaveLength(1);
  });

  it('creates the Event again when a series update finds it deleted', async () => {
    const clock = new VirtualClock({ startMs: T0 });
    const store = new Store({ clock, types: [eventsV1Type] });
    const recorder = createEventRecorder({ backend: store, component: 'c', clock });
    recorder.event(web, 'Normal', 'A', 'Reconcile', 'ok');
    await clock.advance(0);
    const [first] = (await store.list<EventsV1Event>(eventsV1Type)).items;
    await store.delete(eventsV1Type, { namespace: 'shop', name: first?.metadata.name ?? '' });
    recorder.event(web, 'Normal', 'A', 'Reconcile', 'ok');
    await clock.advance(30_000);
    const again = (await store.list<EventsV1Event>(eventsV1Type)).items;
    expect(again.map((e) => [e.metadata.name, e.series?.count])).toEqual([[first?.metadata.name, 2]]);
  });

  it('never throws into the caller nor waits for a backend that hangs; the buffer stays bounded', async () => {
    const hangs: Fault[] = Array.from({ length: 100 }, () => 'hang');
    const { clock, recorder } = setup(hangs, { maxBuffer: 10 });
    for (let i = 0; i < 50; i++) {
      const other: KubeObject = { kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'shop' } };
      expect(() => recorder.event(other, 'Normal', 'A', 'Reconcile', 'ok')).not.toThrow();
    }
    await clock.advance(60_000);
    // Ten were buffered before the writer took the first one, which hangs.
    expect(recorder.stats()).toMatchObject({ recorded: 10, buffered: 9, dropped: { buffer: 40 } });
    const closed = recorder.close({ timeoutMs: 5000 });
    await clock.advance(4999);
    expect(recorder.stats().buffered).toBe(9);
    await clock.advance(1);
    await expect(closed).resolves.toEqual({ flushed: false, abandoned: 10 });
    expect(recorder.stats()).toMatchObject({ buffered: 0, sent: 0, dropped: { closed: 10, error: 0 } });
  });

  it('logs CONVERGE_ERR_EVENTS_CLOSE_TIMEOUT when close gives up on pending writes', async () => {
    const { clock, recorder, logger } = setup(['hang']);
    recorder.event(web, 'Normal', 'A', 'Reconcile', 'ok');
    const closed = recorder.close({ timeoutMs: 1000 });
    await clock.advance(1000);
    await closed;
    const logged = logger.records.find((r) => r.message === 'Event recorder closed with writes pending');
    expect(logged?.fields.err).toMatchObject({ code: 'CONVERGE_ERR_EVENTS_CLOSE_TIMEOUT', abandoned: 1 });
  });

  it('counts invalid events, logs CONVERGE_ERR_EVENTS_INVALID and writes nothing for them', async () => {
    const { clock, recorder, writes, logger } = setup([]);
    const call = recorder.event.bind(recorder) as (...args: unknown[]) => void;
    call(web, 'Info', 'A', 'Reconcile', 'ok');
    call(web, 'Normal', '', 'Reconcile', 'ok');
    call(web, 'Normal', 'A', '', 'ok');
    call(web, 'Normal', 'A', 'Reconcile', 42);
    call({ metadata: {} }, 'Normal', 'A', 'Reconcile', 'ok');
    call(null, 'Normal', 'A', 'Reconcile', 'ok');
    call(web, 'Normal', 'A', 'Reconcile', 'ok', 'not an object');
    await clock.advance(0);
    expect(writes).toHaveLength(0);
    expect(recorder.stats().dropped.invalid).toBe(7);
    expect(
      logger.records.every((r) => (r.fields.err as { code?: string }).code === 'CONVERGE_ERR_EVENTS_INVALID'),
    ).toBe(true);
  });

  it('survives a regarding object whose getters throw and a logger that throws', async () => {
    const throwing: Logger = {
      debug() {},
      info() {},
      warn(_f: LogFields) {
        throw new Error('logger broke');
      },
      error() {
        throw new Error('logger broke');
      },
      child: () => throwing,
    };
    const hostile = {
      get metadata(): never {
        throw new Error('boom');
      },
    } as unknown as KubeObject;
    const { recorder } = setup([], { logger: throwing });
    expect(() => recorder.event(hostile, 'Normal', 'A', 'Reconcile', 'ok')).not.toThrow();
    expect(() => recorder.event(web, 'Info' as 'Normal', 'A', 'Reconcile', 'ok')).not.toThrow();
    expect(recorder.stats().dropped.invalid).toBe(2);
  });
});
