/**
 * `--dashboard`: on by default for `converge dev`, a flag for `converge run`, served at `/` of the
 * metrics address (so it needs one), refused by `serve`.
 */
import { noopLogger } from '@converge/runtime';
import { ReferenceBackend, suiteTypes } from '@converge/runtime/testing/backend-suite';
import { describe, expect, it } from 'vitest';
import { parseCommand, UsageError } from '../src/index.ts';
import { operatedManager, operationsLine } from '../src/operations.ts';

function thrown(argv: readonly string[]): unknown {
  try {
    parseCommand(argv, {});
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('--dashboard', () => {
  it('is off for run unless given, on for dev, and needs a metrics address', () => {
    expect(parseCommand(['run', 'op.ts'], {})).toMatchObject({ dashboard: false });
    expect(
      parseCommand(['run', 'op.ts', '--dashboard', '--metrics-bind-address', '127.0.0.1:8080'], {}),
    ).toMatchObject({ dashboard: true, metricsBindAddress: '127.0.0.1:8080' });
    expect(parseCommand(['dev'], {})).toMatchObject({ dashboard: true, metricsBindAddress: '127.0.0.1:0' });
    const error = thrown(['run', 'op.ts', '--dashboard']);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toContain('--dashboard is served at the metrics address');
    expect(thrown(['serve', '--dashboard'])).toBeInstanceOf(UsageError);
    expect(thrown(['run', 'op.ts', '--dashboard=yes'])).toBeInstanceOf(UsageError);
  });

  it('serves the page at / of the metrics address, or not when turned off', async () => {
    for (const dashboard of [true, false]) {
      const { manager, server } = operatedManager(
        { backend: new ReferenceBackend({ types: [suiteTypes.widget] }) },
        { metricsBindAddress: '127.0.0.1:0', healthProbeBindAddress: '0', dashboard },
        noopLogger,
      );
      const stop = new AbortController();
      const running = manager.start(stop.signal);
      try {
        const line = await operationsLine(server);
        expect(line?.includes(', dashboard at http://127.0.0.1:')).toBe(dashboard);
        const page = await fetch(`${server?.url('metrics')}/`);
        expect(page.status).toBe(dashboard ? 200 : 404);
        await page.text();
      } finally {
        stop.abort();
        await running;
      }
    }
  });
});
