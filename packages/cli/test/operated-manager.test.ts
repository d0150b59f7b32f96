/**
 * The manager `converge run` and `dev` hand to operator modules: every controller a module creates
 * shows in /metrics, however it was created; with both addresses `0` nothing is served.
 */
import { Controller, done, noopLogger, type Source } from '@converge/runtime';
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
