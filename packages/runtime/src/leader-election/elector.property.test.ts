import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConflictError } from '../backend/index.ts';
import { VirtualClock } from '../testing/index.ts';
import { LeaderElector } from './elector.ts';
import type { LeaderLock } from './lock.ts';
import { type LockFault, type LockOperation, MemoryLock } from './memory-lock.ts';
import { firstOverlap, type Interval, type Replica, runReplica } from './test-harness.ts';

const IDS = ['a', 'b', 'c'] as const;

/** Timings that satisfy leaseDuration > renewDeadline > 1.2 × retryPeriod, with margins down to 1 ms. */
const timings = fc
  .record({
    retryPeriodMs: fc.integer({ min: 200, max: 3_000 }),
    extraDeadline: fc.integer({ min: 1, max: 8_000 }),
    extraLease: fc.integer({ min: 1, max: 8_000 }),
  })
  .map(({ retryPeriodMs, extraDeadline, extraLease }) => {
    const renewDeadlineMs = Math.floor(retryPeriodMs * 1.2) + extraDeadline;
    return { retryPeriodMs, renewDeadlineMs, leaseDurationMs: renewDeadlineMs + extraLease };
  });

type Command =
  | { readonly kind: 'advance'; readonly ms: number }
  | {
      readonly kind: 'fault';
      readonly who: number | undefined;
      readonly fault: LockFault;
      readonly operations: readonly LockOperation[] | undefined;
      readonly count: number;
    }
  | { readonly kind: 'stop'; readonly who: number }
  | { readonly kind: 'start'; readonly who: number };

const who = fc.integer({ min: 0, max: IDS.length - 1 });
const fault: fc.Arbitrary<LockFault> = fc.oneof(
  fc.constant<LockFault>({ type: 'error' }),
  fc.constant<LockFault>({ type: 'error', error: new ConflictError('injected conflict') }),
  fc.constant<LockFault>({ type: 'hang' }),
  fc.constant<LockFault>({ type: 'lostResponse' }),
  fc.constant<LockFault>({ type: 'conflict' }),
);
const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 20_000 }) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('fault' as const),
      who: fc.option(who, { nil: undefined }),
      fault,
      operations: fc.option(fc.subarray(['get', 'create', 'update'] as LockOperation[], { minLength: 1 }), {
        nil: undefined,
      }),
      count: fc.integer({ min: 1, max: 6 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('stop' as const), who }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('start' as const), who }) },
);

/** A locker that notes when each acknowledged write was issued. */
function recording(inner: LeaderLock, clock: VirtualClock, acked: number[]): LeaderLock {
  const write = async (call: () => Promise<string>): Promise<string> => {
    const at = clock.now();
    const version = await call();
    acked.push(at);
    return version;
  };
  return {
    identity: inner.identity,
    describe: () => inner.describe(),
    get: (signal) => inner.get(signal),
    create: (record, signal) => write(() => inner.create(record, signal)),
    update: (record, version, signal) => write(() => inner.update(record, version, signal)),
  };
}

interface Instance {
  readonly replica: Replica;
  readonly acked: number[];
}

describe('LeaderElector safety (property)', () => {
  it('never has two electors leading at the same virtual instant, and every leading signal aborts by the renew deadline', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(command, { maxLength: 40 }),
        fc.array(fc.boolean(), { minLength: IDS.length, maxLength: IDS.length }),
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.oneof(
          fc.constant({ retryPeriodMs: 2_000, renewDeadlineMs: 10_000, leaseDurationMs: 15_000 }),
          timings,
        ),
        async (commands, release, seed, timing) => {
          const clock = new VirtualClock({ seed, startMs: 1_000_000 });
          const lock = new MemoryLock();
          const instances: Instance[] = [];
          const current: (Instance | undefined)[] = IDS.map(() => undefined);
          const start = (i: number): void => {
            const acked: number[] = [];
            const elector = new LeaderElector({
              lock: recording(lock.locker(IDS[i] as string), clock, acked),
              clock,
              releaseOnCancel: release[i] ?? true,
              ...timing,
            });
            const instance = { replica: runReplica(elector, clock), acked };
            instances.push(instance);
            current[i] = instance;
          };
          const running = (i: number): boolean => {
            const r = current[i]?.replica;
            return r !== undefined && !r.stop.signal.aborted && !r.settled;
          };
          const leaders = (): number => instances.filter((x) => x.replica.elector.isLeader).length;

          for (let i = 0; i < IDS.length; i++) start(i);
          for (const c of commands) {
            switch (c.kind) {
              case 'advance':
                await clock.advance(c.ms);
                break;
              case 'fault':
                lock.inject(c.fault, {
                  count: c.count,
                  ...(c.who === undefined ? {} : { identity: IDS[c.who] as string }),
                  ...(c.operations === undefined ? {} : { operations: c.operations }),
                });
                break;
              case 'stop':
                current[c.who]?.replica.stop.abort();
                break;
              case 'start':
                if (!running(c.who)) start(c.who);
                break;
            }
            expect(leaders()).toBeLessThanOrEqual(1);
          }

          // Liveness: with faults gone and every replica running, exactly one leads.
          lock.clearFaults();
          for (let i = 0; i < IDS.length; i++) if (!running(i)) start(i);
          await clock.advance(2 * timing.leaseDurationMs + 4 * timing.retryPeriodMs);
          expect(leaders()).toBe(1);

          const intervals: Interval[] = instances.flatMap((x) => x.replica.intervals);
          expect(firstOverlap(intervals)).toBeUndefined();
          for (const { replica, acked } of instances) {
            for (const interval of replica.intervals) {
              const end = interval.end ?? clock.now();
              const lastAck = Math.max(...acked.filter((t) => t <= end));
              expect(end).toBeLessThanOrEqual(lastAck + timing.renewDeadlineMs);
            }
          }
          for (const x of instances) x.replica.stop.abort();
          await clock.advance(timing.renewDeadlineMs);
          await Promise.all(instances.map((x) => x.replica.done));
        },
      ),
      { numRuns: 500 },
    );
  });
});
