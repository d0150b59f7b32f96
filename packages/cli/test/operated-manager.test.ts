/**
 * The manager `converge run` and `dev` hand to operator modules: every controller a module creates
 * shows in /metrics, however it was created; with both addresses `0` nothing is served.
 */
import { Controller, done, MemoryMembership, noopLogger, ShardMember, type Source } from '@converge/runtime';
import { VirtualClock } from '@converge/runtime/testing';
import { ReferenceBackend, suiteTypes } from '@converge/runtime/testing/backend-suite';
import { describe, expect, it } from 'vitest';
import { operatedManager, operationsLine } from '../src/operations.ts';

const { widget: widgetType } = suiteTypes;

/** A source that syncs at once and never sends anything. */
const idle: Source<string> = {
  name: 'idle',
  start: (signal) =>
    new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
};

describe('operatedManager', () => {
  it('instruments a built controller (also behind onStop), a dynamic controller and one added by hand', async () => {
    const backend = new ReferenceBackend({ types: [widgetType] });
    const { manager, server } = operatedManager(
      { backend },
      { metricsBindAddress: '127.0.0.1:0', healthProbeBindAddress: '0' },
      noopLogger,
      'my-lease',
    );
    manager
      .controller(widgetType)
      .named('built')
      .complete(async () => done());
    manager
      .controller(widgetType)
      .named('with-stop-hook')
      .onStop(async () => {})
      .complete(async () => done());
    manager.dynamicController({ name: 'dynamic' });
    manager.add(new Controller<string>({ name: 'by-hand', sources: [idle], reconciler: async () => done() }));
    const stop = new AbortController();
    const running = manager.start(stop.signal);
    try {
      const line = await operationsLine(server);
      expect(line).toMatch(
        /^converge: metrics at http:\/\/127\.0\.0\.1:\d+\/metrics \(keys at .*\/debug\/keys\), dashboard at http:\/\/127\.0\.0\.1:\d+\/, health probes not served$/,
      );
      const text = await (await fetch(`${server?.url('metrics')}/metrics`)).text();
      const controllers = [
        ...text.matchAll(/^controller_runtime_max_concurrent_reconciles\{controller="([^"]+)"\}/gm),
      ]
        .map((m) => m[1])
        .sort();
      expect(controllers).toEqual(['built', 'by-hand', 'dynamic', 'with-stop-hook']);
      expect(text).toMatch(/^leader_election_master_status\{name="my-lease"\} 1$/m);
    } finally {
      stop.abort();
      await running;
    }
  });

  it('with sharding, serves the shard member in /metrics and /debug/keys', async () => {
    const clock = new VirtualClock({ startMs: 1_000_000 });
    const member = new ShardMember({
      membership: new MemoryMembership({ group: 'widgets' }).member('pod-a'),
      identity: 'pod-a',
      clock,
      leaseDurationMs: 3_000,
      renewDeadlineMs: 2_000,
      retryPeriodMs: 500,
    });
    const { manager, server } = operatedManager(
      { backend: new ReferenceBackend({ types: [widgetType], clock }), clock, sharding: member },
      { metricsBindAddress: '127.0.0.1:0', healthProbeBindAddress: '0' },
      noopLogger,
    );
    // The builder shards a controller of a manager that shards.
    manager
      .controller(widgetType)
      .named('sharded')
      .complete(async () => done());
    const stop = new AbortController();
    const running = manager.start(stop.signal);
    try {
      await server?.whenListening();
      await clock.advance(4_000);
      const text = await (await fetch(`${server?.url('metrics')}/metrics`)).text();
      expect(text).toMatch(/^converge_shard_phase\{group="widgets",phase="member"\} 1$/m);
      expect(text).toMatch(/^converge_shard_members\{group="widgets"\} 1$/m);
      expect(text).toMatch(/^converge_shard_key_space_share\{group="widgets"\} 1$/m);
      expect(text).toMatch(/^converge_fenced_writes_total\{fence="widgets\/pod-a"\} 0$/m);
      expect(text).toMatch(/^converge_shard_queue_keys\{controller="sharded",owned="true"\} 0$/m);
      const keys = (await (await fetch(`${server?.url('debug')}/debug/keys`)).json()) as {
        sharding?: { identity: string; phase: string; members: string[] };
      };
      expect(keys.sharding).toMatchObject({ identity: 'pod-a', phase: 'member', members: ['pod-a'] });
    } finally {
      stop.abort();
      await clock.advance(5_000);
      await running;
    }
  });

  it('serves nothing with both addresses 0, and says so', async () => {
    const { manager, server } = operatedManager(
      { backend: new ReferenceBackend({ types: [widgetType] }) },
      { metricsBindAddress: '0', healthProbeBindAddress: '0' },
      noopLogger,
    );
    expect(server).toBeUndefined();
    expect(manager.constructor.name).toBe('Manager');
    expect(await operationsLine(server)).toBe('converge: metrics and health probes not served');
  });
});
