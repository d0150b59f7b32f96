import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../store.ts';
import type { StoreOptions } from '../store-options.ts';
import { CM, type ConfigMap, cm, makeStore } from '../testdata/fixtures.ts';
import { LOG_FILE } from './data-dir.ts';
import { SNAPSHOT_FILE } from './snapshot.ts';
import { faultyFs, removeTempDirs, tempDir } from './test-helpers.ts';

afterEach(removeTempDirs);

function open(dataDir: string, options: StoreOptions = {}): Store {
  return makeStore({ dataDir, ...options }).store;
}

function diskBytes(dir: string): number {
  const size = (name: string): number => (existsSync(join(dir, name)) ? statSync(join(dir, name)).size : 0);
  return size(LOG_FILE) + size(SNAPSHOT_FILE);
}

async function liveBytes(store: Store): Promise<number> {
  let bytes = 0;
  for (const item of (await store.list(CM)).items) bytes += Buffer.byteLength(JSON.stringify(item));
  return bytes;
}

describe('compaction', () => {
  it('a store written in 50 short sessions keeps log + snapshot within 3x of its live data (bounded disk)', async () => {
    const dir = tempDir();
    const persistence = { minLogBytes: 16_384 };
    let worst = 0;
    for (let session = 0; session < 50; session++) {
      const store = open(dir, { persistence });
      for (let i = 0; i < 20; i++) {
        const name = `cm-${i}`;
        const data = { v: `${session}-${'x'.repeat(1_000)}` };
        const existing = await store
          .get<ConfigMap>(CM, { namespace: 'default', name })
          .catch(() => undefined);
        if (existing === undefined) await store.create(CM, cm(name, data));
        else await store.update(CM, { ...existing, data });
      }
      const live = await liveBytes(store);
      await store.close();
      worst = Math.max(worst, diskBytes(dir) / live);
    }
    // 1 000 writes of ~1 KiB: without compaction across sessions the log would hold ~1 MiB.
    expect(worst).toBeLessThanOrEqual(3);
    const reopened = open(dir, { persistence });
    expect((await reopened.list(CM)).items).toHaveLength(20);
    await reopened.close();
  });

  it('a large object patched many times keeps the log bounded by the policy, not by the number of patches', async () => {
    const dir = tempDir();
    const store = open(dir);
    const big = { blob: 'y'.repeat(300_000) };
    await store.create(CM, cm('big', big));
    for (let i = 0; i < 60; i++) {
      await store.patch(
        CM,
        { namespace: 'default', name: 'big' },
        { type: 'merge', patch: { data: { n: String(i) } } },
      );
    }
    const live = await liveBytes(store);
    // 61 records of 300 KB would be 18 MB; the policy keeps the log under 2x the snapshot.
    expect(diskBytes(dir)).toBeLessThanOrEqual(3 * live + 300_000);
    expect(store.health().persistence?.snapshots).toBeGreaterThan(0);
    await store.close();
  });

  it('the policy is evaluated at start: a log grown without snapshots is compacted when the store opens', async () => {
    const dir = tempDir();
    const first = open(dir, { persistence: { minLogBytes: 1e12 } });
    for (let i = 0; i < 200; i++) await first.create(CM, cm(`cm-${i}`, { v: 'z'.repeat(500) }));
    for (let i = 0; i < 200; i++) await first.delete(CM, { namespace: 'default', name: `cm-${i}` });
    await first.create(CM, cm('last'));
    await first.close();
    const grown = diskBytes(dir);
    const second = open(dir, { persistence: { minLogBytes: 4_096 } });
    expect(second.health().persistence?.snapshots).toBe(1);
    expect(diskBytes(dir)).toBeLessThan(grown / 20);
    expect((await second.list(CM)).items.map((o) => o.metadata.name)).toEqual(['last']);
    await second.close();
  });

  it('the loader streams the log in bounded reads: memory does not grow with the file (no whole-file buffer)', async () => {
    const dir = tempDir();
    const first = open(dir, { persistence: { minLogBytes: 1e12 } });
    for (let i = 0; i < 400; i++) await first.create(CM, cm(`cm-${i}`, { v: 'q'.repeat(10_000) }));
    await first.close();
    expect(statSync(join(dir, LOG_FILE)).size).toBeGreaterThan(3 * 1024 * 1024);
    const faults = faultyFs();
    const second = open(dir, { persistence: { minLogBytes: 1e12, fileSystem: faults.fs } });
    expect(faults.maxRead()).toBeLessThanOrEqual(1024 * 1024);
    expect((await second.list(CM)).items).toHaveLength(400);
    await second.close();
  });
});
