import { AbortedError, LeaderElector, LeaderLostError, UnavailableError } from '@converge/runtime';
import { jetstream } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PrivateNats, startPrivateNats } from '../test-harness.ts';
import { KvLeaseLock } from './kv-lease-lock.ts';
import {
  connectTo,
  createTestBucket,
  firstDoubleLeader,
  type LeadershipEvent,
  type RunningElector,
  runLogged,
  sampleLeaders,
  timerLateness,
  waitFor,
} from './test-harness.ts';

const TIMINGS = { leaseDurationMs: 1_000, renewDeadlineMs: 600, retryPeriodMs: 100 } as const;
/** What a deadline kept by a timer may take beyond the timer's lateness: a NATS callback, a few microtasks. */
const WORK_SLACK_MS = 100;

let server: PrivateNats;
let connections: NatsConnection[] = [];

beforeAll(async () => {
  server = await startPrivateNats();
  connections = await Promise.all([connectTo(server.url), connectTo(server.url)]);
});
afterAll(async () => {
  await Promise.all(connections.map((c) => c.close()));
  await server.dispose();
});

const [ca, cb] = [() => connections[0] as NatsConnection, () => connections[1] as NatsConnection];
const record = {
  holderIdentity: 'a',
  leaseDurationMs: 1_000,
  acquireTime: '2024-05-06T07:08:09.123000Z',
  renewTime: '2024-05-06T07:08:09.123000Z',
  leaderTransitions: 0,
};

describe('KvLeaseLock when the NATS server goes away (private server)', () => {
  it('steps the leader down by its renew deadline when the server stops; after a restart exactly one leads', async () => {
    const bucket = await createTestBucket(ca());
    const lockOf = (connection: NatsConnection, identity: string): Promise<KvLeaseLock> =>
      KvLeaseLock.open({ connection, bucket: bucket.name, createBucket: false, key: 'operator', identity });
    const a = new LeaderElector({ lock: await lockOf(ca(), 'a'), ...TIMINGS });
    const b = new LeaderElector({ lock: await lockOf(cb(), 'b'), ...TIMINGS });
    const log: LeadershipEvent[] = [];
    const sampler = sampleLeaders([a, b]);
    const lateness = timerLateness();
    const running: RunningElector[] = [runLogged(a, log)];
    await waitFor('a to lead', () => a.isLeader, 30_000);
    running.push(runLogged(b, log));
    await waitFor('b to see a leading', () => b.leader === 'a', 30_000);

    await server.stop();
    const down = Date.now();
    const [ra] = running as [RunningElector];
    await waitFor('a to step down', () => ra.settled, 30_000);
    const outcome = await ra.done;
    expect(outcome).toBeInstanceOf(LeaderLostError);
    const stepped = log.find((e) => e.identity === 'a' && e.type === 'stop');
    expect(stepped?.reason).toBe(outcome);
    // Its last renewal started before the server went down, so its deadline is at most 0.6 s later.
    // Its timer fires late by as much as any timer in this process did meanwhile (a loaded machine).
    expect((stepped?.at as number) - down).toBeLessThanOrEqual(
      TIMINGS.renewDeadlineMs + lateness.maxMs() + WORK_SLACK_MS,
    );
    lateness.stop();
    expect(b.isLeader).toBe(false);

    await server.restart();
    // a's process exits on LeaderLostError and is restarted: it runs again with the same identity.
    running.push(runLogged(a, log));
    await waitFor('a leader after the restart', () => a.isLeader || b.isLeader, 30_000);
    const leader = a.isLeader ? 'a' : 'b';
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    sampler.stop();
    expect([a, b].filter((e) => e.isLeader).map((e) => e.identity)).toEqual([leader]);
    expect(firstDoubleLeader(log)).toBeUndefined();
    expect(sampler.doubles()).toBe(0);
    expect((await bucket.kv.get('operator'))?.json()).toMatchObject({ spec: { holderIdentity: leader } });

    for (const r of running) r.stop.abort();
    await Promise.all(running.map((r) => r.done));
    await bucket.destroy();
  });

  it('rejects calls during an outage: promptly with AbortedError when aborted, else UnavailableError when NATS times out', async () => {
    const bucket = await createTestBucket(ca());
    // A JetStream context with a 300 ms request timeout, so the NATS timeout comes quickly.
    const kv = await new Kvm(jetstream(ca(), { timeout: 300 })).open(bucket.name);
    const lock = new KvLeaseLock({ kv, key: 'operator', identity: 'a' });
    const version = await lock.create(record, new AbortController().signal);
    await server.stop();
    try {
      const abort = new AbortController();
      const lateness = timerLateness();
      let abortedAt = 0;
      const pending = lock.update(record, version, abort.signal);
      setTimeout(() => {
        abortedAt = performance.now();
        abort.abort(new Error('renew deadline'));
      }, 50);
      await expect(pending).rejects.toBeInstanceOf(AbortedError);
      // Promptly, counted from the abort itself (the 50 ms timer may fire late on a loaded
      // machine), not after the 300 ms NATS request timeout; a stalled process is allowed its stall.
      expect(abortedAt).toBeGreaterThan(0);
      expect(performance.now() - abortedAt).toBeLessThan(WORK_SLACK_MS + lateness.maxMs());
      lateness.stop();

      const error: unknown = await lock.get(new AbortController().signal).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnavailableError);
      expect((error as UnavailableError).retryable).toBe(true);
      expect((error as Error).cause).toMatchObject({ name: 'TimeoutError' });
    } finally {
      await server.restart();
    }
    // The server kept the entry: the lock reads it back once the connection is back.
    await waitFor(
      'the lock to read the entry again',
      async () => (await lock.get(new AbortController().signal).catch(() => undefined))?.version === version,
      30_000,
      50,
    );
    await bucket.destroy();
  });
});
