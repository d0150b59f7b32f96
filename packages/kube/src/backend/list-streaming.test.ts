import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConfigMap, configMaps } from './fault-test-support.ts';
import { type EmbeddedCluster, startEmbeddedCluster } from './test-harness.ts';

const COUNT = 20_000;
let cluster: EmbeddedCluster;

beforeAll(async () => {
  cluster = await startEmbeddedCluster({ namespaces: ['big'] });
  const { store } = cluster.server;
  const type = store.resolveType('v1', 'ConfigMap');
  if (type === undefined) throw new Error('the embedded server serves no ConfigMap');
  const payload = 'x'.repeat(1_000);
  for (let i = 0; i < COUNT; i++) {
    await store.create(type, {
      metadata: { name: `cm-${String(i).padStart(6, '0')}`, namespace: 'big' },
      data: { payload },
    });
  }
}, 120_000);

afterAll(async () => {
  await cluster.close();
});

/**
 * Runs `work` while a 1 ms ticker measures the longest event-loop block: the most CPU time this
 * thread spent between two ticks. CPU time, not wall time: on a loaded machine the thread is also
 * descheduled between ticks, which lengthens the wall-clock gap but is no block of ours.
 */
async function longestBlock<T>(work: () => Promise<T>): Promise<{ result: T; blockedMs: number }> {
  const cpu = (): number => {
    const { user, system } = process.threadCpuUsage();
    return (user + system) / 1_000;
  };
  let last = cpu();
  let worst = 0;
  const ticker = setInterval(() => {
    const now = cpu();
    worst = Math.max(worst, now - last);
    last = now;
  }, 1);
  try {
    const result = await work();
    // Let the ticker run once more, so a block at the very end is measured too.
    await new Promise((resolve) => setTimeout(resolve, 5));
    return { result, blockedMs: worst };
  } finally {
    clearInterval(ticker);
  }
}

describe('list decoding', () => {
  it(`decodes an unpaginated list of ${COUNT} objects (~22 MB) item by item without blocking the event loop for long`, async () => {
    const { backend } = cluster;
    const streamed = await longestBlock(() => backend.list<ConfigMap>(configMaps, { namespace: 'big' }));
    expect(streamed.result.items).toHaveLength(COUNT);
    expect(streamed.result.items[COUNT - 1]).toMatchObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm-019999' },
    });
    // The same bytes in one JSON.parse, the way most clients decode a list.
    const naive = await longestBlock(async () => {
      const { url, token, ca } = cluster.server;
      const { Agent, request } = await import('undici');
      const dispatcher = new Agent({ connect: { ca: ca ?? '' } });
      try {
        const response = await request(`${url}/api/v1/namespaces/big/configmaps`, {
          headers: { authorization: `Bearer ${token}` },
          dispatcher,
        });
        const text = await response.body.text();
        return (JSON.parse(text) as { items: unknown[] }).items.length;
      } finally {
        await dispatcher.close();
      }
    });
    expect(naive.result).toBe(COUNT);
    if (process.env.CONVERGE_REPORT === '1') {
      console.info(
        `list of ${COUNT}: streamed decode blocked ≤ ${streamed.blockedMs.toFixed(1)} ms; one JSON.parse ≤ ${naive.blockedMs.toFixed(1)} ms`,
      );
    }
    expect(streamed.blockedMs, 'the streamed decode yields to the event loop').toBeLessThan(100);
    expect(streamed.blockedMs, 'and blocks for less than one JSON.parse of the whole list').toBeLessThan(
      naive.blockedMs,
    );
  }, 60_000);
});
