import { Client, type KubeObject, resourceType } from '@converge/runtime';
import { FakeBackend, settle, VirtualClock } from '@converge/runtime/testing';
import { trace } from '@opentelemetry/api';
import { afterAll, describe, expect, it } from 'vitest';
import { modified, pushController, recorder } from './test-harness.ts';
import { Tracing } from './tracing.ts';

const configMaps = resourceType({
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  namespaced: true,
});

function configMap(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'default', name } };
}

// This file owns the global tracer provider of its worker: nothing is registered until the second test.
afterAll(() => trace.disable());

describe('without an SDK', () => {
  it('records nothing and changes nothing; an SDK registered later gets the spans from then on', async () => {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
    const backend = new FakeBackend({ clock });
    const client = new Client({ backend, clock });
    const results: string[] = [];
    const { controller, push } = pushController(clock, {
      name: 'configs',
      reconciler: async ({ name }) => {
        await client.create(configMaps, configMap(name));
        results.push(name);
        if (name === 'bad') throw new Error('bad config');
      },
    });
    // The default: the global provider of @opentelemetry/api, a no-op until an SDK is registered.
    new Tracing().instrument(controller).instrument(client);
    const abort = new AbortController();
    const running = controller.start(abort.signal);
    await clock.advance(0);
    push('a', modified('a', '1'));
    push('bad', modified('bad', '2'));
    await settle();
    expect(results).toEqual(['a', 'bad']);
    expect(controller.inspect().map((k) => [k.id, k.state, k.lastError?.message])).toEqual([
      ['default/bad', 'backoff', 'bad config'],
    ]);
    expect((await backend.list(configMaps)).items).toHaveLength(2);

    const rec = recorder();
    try {
      expect(trace.setGlobalTracerProvider(rec.provider)).toBe(true);
      push('b', modified('b', '3'));
      await settle();
      expect(rec.spans().map((s) => s.name)).toEqual([
        'modified Widget',
        'POST v1 configmaps',
        'reconcile configs',
      ]);
    } finally {
      abort.abort();
      await running;
      await rec.close();
    }
  });
});
