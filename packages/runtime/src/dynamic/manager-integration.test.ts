import { describe, expect, it } from 'vitest';
import { type LeaderElection, Manager } from '../manager/index.ts';
import { done } from '../reconcile/index.ts';
import { FakeBackend, settle, VirtualClock } from '../testing/index.ts';
import { object, widgetKind } from './test-support.ts';

describe('DynamicController in a manager', () => {
  it('is leader-gated: with warm standby its kinds sync before leadership and reconcile only once leading', async () => {
    const clock = new VirtualClock();
    const backend = new FakeBackend({ clock });
    const kind = widgetKind(1);
    backend.set(kind, object(kind, 'a'));
    let grant: ((lost: AbortSignal) => void) | undefined;
    const election: LeaderElection = { acquire: () => new Promise((resolve) => (grant = resolve)) };
    const manager = new Manager({ clock, backend, leaderElection: election });
    const dynamic = manager.dynamicController({ workers: 2 });
    expect(dynamic.needLeaderElection).toBe(true);
    const stop = new AbortController();
    const run = manager.start(stop.signal);
    const calls: string[] = [];
    await dynamic.serve(kind, (request) => {
      calls.push(request.name);
      return done();
    });
    await settle();
    // Standby: the kind's informer runs in the manager's shared informers and has synced…
    expect(dynamic.allSynced()).toBe(true);
    expect(dynamic.cache(kind)?.size).toBe(1);
    expect(manager.informers.size).toBe(1);
    // …but nothing reconciles before leadership.
    expect(calls).toEqual([]);
    grant?.(new AbortController().signal);
    await settle();
    expect(calls).toEqual(['a']);
    await dynamic.stopServing(kind);
    expect(manager.informers.size).toBe(0);
    stop.abort();
    await run;
    expect(backend.openWatches).toBe(0);
  });

  it("stopping a kind also releases the manager client's cached reader of it, so no informer is left", async () => {
    const clock = new VirtualClock();
    const backend = new FakeBackend({ clock });
    const kind = widgetKind(1);
    backend.set(kind, object(kind, 'a'));
    const manager = new Manager({ clock, backend });
    const dynamic = manager.dynamicController({ workers: 1 });
    const stop = new AbortController();
    const run = manager.start(stop.signal);
    await settle();
    const read: string[] = [];
    let stoppedType: string | undefined;
    const other = manager.dynamicController({
      name: 'other',
      onKindStopped: (type) => (stoppedType = type.kind),
    });
    await dynamic.serve(kind, async (request, { signal }) => {
      // Reads through the manager's cached client, which acquires its own reader of the kind.
      const got = await manager.client.get(kind, request, { signal });
      read.push(got.metadata.name ?? '');
    });
    await settle();
    expect(read).toEqual(['a']);
    await dynamic.stopServing(kind);
    await settle();
    expect(manager.informers.size).toBe(0);
    expect(backend.openWatches).toBe(0);
    await other.serve(widgetKind(2), () => undefined);
    await other.stopServing(widgetKind(2));
    expect(stoppedType).toBe('Widget2');
    stop.abort();
    await run;
  });

  it('without a default backend it runs its own informers for the backend it is given', async () => {
    const clock = new VirtualClock();
    const backend = new FakeBackend({ clock });
    const kind = widgetKind(1);
    backend.set(kind, object(kind, 'a'));
    const manager = new Manager({ clock });
    const dynamic = manager.dynamicController({ backend, needLeaderElection: false });
    const stop = new AbortController();
    const run = manager.start(stop.signal);
    const calls: string[] = [];
    await settle();
    await dynamic.serve(kind, (request) => void calls.push(request.name));
    await settle();
    expect(calls).toEqual(['a']);
    expect(manager.informers.size).toBe(0);
    stop.abort();
    await run;
    expect(backend.openWatches).toBe(0);
  });
});
