import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock/virtual-clock.ts';
import { AlreadyStartedError, OptionsError } from '../errors.ts';
import type { LeaderElection, Runnable } from '../runnable/index.ts';
import {
  CacheSyncTimeoutError,
  LeadershipLostError,
  ManagerShutdownTimeoutError,
  RunnableFailedError,
} from './errors.ts';
import { Manager, type SyncingRunnable } from './manager.ts';

function recorder(log: string[], name: string, extra: Partial<Runnable> = {}): Runnable {
  return {
    ...extra,
    start: (signal) =>
      new Promise<void>((resolve) => {
        log.push(`start ${name}`);
        signal.addEventListener('abort', () => {
          log.push(`stop ${name}`);
          resolve();
        });
      }),
  };
}

function cache(log: string[], name: string) {
  let sync: () => void = () => {};
  const synced = new Promise<void>((r) => {
    sync = r;
  });
  const runnable: SyncingRunnable = { ...recorder(log, name), waitForSync: () => synced };
  return { runnable, sync: () => sync() };
}

describe('Manager', () => {
  it('starts servers, then caches, then others and leader runnables only after caches synced, and stops in reverse', async () => {
    const clock = new VirtualClock();
    const log: string[] = [];
    const manager = new Manager({ clock });
    const c = cache(log, 'cache');
    manager.add(recorder(log, 'controller'));
    manager.add(recorder(log, 'metrics-reader', { needLeaderElection: false }));
    manager.add(recorder(log, 'server'), { group: 'servers' });
    manager.addCache(c.runnable);
    const abort = new AbortController();
    const run = manager.start(abort.signal);
    await clock.advance(0);
    expect(log).toEqual(['start server', 'start cache']);
    expect((await manager.ready()).ok).toBe(false);
    c.sync();
    await clock.advance(0);
    expect(log).toEqual(['start server', 'start cache', 'start metrics-reader', 'start controller']);
    expect(manager.synced).toBe(true);
    expect((await manager.ready()).ok).toBe(true);
    abort.abort();
    await run;
    expect(log.slice(4)).toEqual(['stop controller', 'stop metrics-reader', 'stop cache', 'stop server']);
    expect(manager.state).toBe('stopped');
  });

  it('stops everything and rejects with the first failure when a runnable fails', async () => {
    const clock = new VirtualClock();
    const log: string[] = [];
    const manager = new Manager({ clock });
    let fail: (e: Error) => void = () => {};
    manager.add(recorder(log, 'healthy'));
    manager.add({ start: () => new Promise((_, reject) => (fail = reject)) }, { name: 'broken' });
    const run = manager.start(new AbortController().signal).catch((e: unknown) => e);
    await clock.advance(0);
    fail(new Error('boom'));
    const error = (await run) as RunnableFailedError;
    expect(error).toBeInstanceOf(RunnableFailedError);
    expect(error.runnable).toBe('broken');
    expect((error.cause as Error).message).toBe('boom');
    expect(log).toEqual(['start healthy', 'stop healthy']);
  });

  it('fails with CacheSyncTimeoutError and never starts controllers when caches do not sync in time', async () => {
    const clock = new VirtualClock();
    const log: string[] = [];
    const manager = new Manager({ clock, cacheSyncTimeoutMs: 1000 });
    manager.addCache(cache(log, 'cache').runnable);
    manager.add(recorder(log, 'controller'));
    const run = manager.start(new AbortController().signal).catch((e: unknown) => e);
    await clock.advance(1000);
    expect(await run).toBeInstanceOf(CacheSyncTimeoutError);
    expect(log).toEqual(['start cache', 'stop cache']);
  });

  it('runs leader runnables only while leading and stops with LeadershipLostError when leadership is lost', async () => {
    const clock = new VirtualClock();
    const log: string[] = [];
    let grant: (lost: AbortSignal) => void = () => {};
    const lose = new AbortController();
    const election: LeaderElection = { acquire: () => new Promise((r) => (grant = r)) };
    const manager = new Manager({ clock, leaderElection: election });
    manager.add(recorder(log, 'controller'));
    manager.add(recorder(log, 'standby', { needLeaderElection: false }));
    const run = manager.start(new AbortController().signal).catch((e: unknown) => e);
    await clock.advance(0);
    expect(log).toEqual(['start standby']);
    expect(manager.leading).toBe(false);
    grant(lose.signal);
    await clock.advance(0);
    expect(manager.leading).toBe(true);
    expect(log).toEqual(['start standby', 'start controller']);
    lose.abort(new Error('lease taken'));
    const error = await run;
    expect(error).toBeInstanceOf(LeadershipLostError);
    expect(log).toEqual(['start standby', 'start controller', 'stop controller', 'stop standby']);
  });

  it('rejects with ManagerShutdownTimeoutError naming the runnables that did not stop in time', async () => {
    const clock = new VirtualClock();
    const manager = new Manager({ clock, gracefulShutdownTimeoutMs: 500 });
    manager.add({ start: () => new Promise(() => {}) }, { name: 'stuck' });
    const abort = new AbortController();
    const run = manager.start(abort.signal).catch((e: unknown) => e);
    await clock.advance(0);
    abort.abort();
    await clock.advance(500);
    const error = (await run) as ManagerShutdownTimeoutError;
    expect(error).toBeInstanceOf(ManagerShutdownTimeoutError);
    expect(error.running).toEqual(['stuck']);
  });

  it('starts a runnable added while running at once', async () => {
    const clock = new VirtualClock();
    const log: string[] = [];
    const manager = new Manager({ clock });
    const abort = new AbortController();
    const run = manager.start(abort.signal);
    await clock.advance(0);
    manager.add(recorder(log, 'late'));
    await clock.advance(0);
    expect(log).toEqual(['start late']);
    abort.abort();
    await run;
    expect(log).toEqual(['start late', 'stop late']);
  });

  it('reports health checks as functions: a throwing check fails the report', async () => {
    const manager = new Manager({ clock: new VirtualClock() });
    manager.addHealthCheck('ping', () => {});
    manager.addHealthCheck('db', async () => Promise.reject(new Error('db down')));
    const report = await manager.health();
    expect(report.ok).toBe(false);
    expect(report.checks.ping).toEqual({ ok: true });
    expect(report.checks.db).toEqual({ ok: false, error: 'db down' });
    expect(() => manager.addHealthCheck('ping', () => {})).toThrow(OptionsError);
  });

  it('starts once', async () => {
    const clock = new VirtualClock();
    const manager = new Manager({ clock });
    const abort = new AbortController();
    const run = manager.start(abort.signal);
    await expect(manager.start(abort.signal)).rejects.toBeInstanceOf(AlreadyStartedError);
    abort.abort();
    await run;
  });

  it('rejects bad options and runnables with a typed error', () => {
    expect(() => new Manager({ gracefulShutdownTimeoutMs: -1 })).toThrow(OptionsError);
    expect(() => new Manager({ cacheSyncTimeoutMs: Number.NaN })).toThrow(OptionsError);
    expect(() => new Manager({ leaderElection: {} as LeaderElection })).toThrow(OptionsError);
    const manager = new Manager();
    expect(() => manager.add({} as Runnable)).toThrow(OptionsError);
    expect(() => manager.add({ start: async () => {} }, { group: 'caches' })).toThrow(OptionsError);
  });
});
