import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VirtualClock } from '@converge/runtime/testing';
import { nodeFileSystem, Store, type StoreFileSystem } from '@converge/store';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './test-support.ts';

const dirs: string[] = [];
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A store in a temporary data dir whose file renames (the last step of a snapshot) fail while `full()` is true. */
function storeWithFullDisk(full: () => boolean, clock: VirtualClock): Store {
  const dir = mkdtempSync(join(tmpdir(), 'converge-health-'));
  dirs.push(dir);
  const fileSystem: StoreFileSystem = {
    ...nodeFileSystem,
    renameSync: (from, to) => {
      if (full()) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
      nodeFileSystem.renameSync(from, to);
    },
  };
  return new Store({
    clock,
    dataDir: dir,
    snapshotEveryRecords: 2,
    persistence: { fileSystem, retryInitialMs: 1_000 },
  });
}

describe('/healthz, /livez and /readyz', () => {
  it('a healthy server answers ok, and lists its checks with ?verbose', async () => {
    server = await startTestServer();
    for (const endpoint of ['healthz', 'livez', 'readyz']) {
      const res = await server.request(`/${endpoint}`, { anonymous: true });
      expect([endpoint, res.status, res.text]).toEqual([endpoint, 200, 'ok']);
    }
    const verbose = await server.request('/readyz?verbose', { anonymous: true });
    expect(verbose.text).toBe('[+]ping ok\n[+]shutdown ok\n[+]store ok\nreadyz check passed\n');
    expect((await server.request('/readyz/nope', { anonymous: true })).status).toBe(404);
  });

  it('a failing snapshot makes /readyz fail (writes still succeed), and it recovers once a snapshot succeeds', async () => {
    let full = false;
    const clock = new VirtualClock();
    server = await startTestServer({ store: storeWithFullDisk(() => full, clock) });
    full = true;
    for (let i = 0; i < 4; i++) {
      const created = await server.request('/api/v1/namespaces/default/configmaps', {
        method: 'POST',
        body: { metadata: { name: `cm-${i}` }, data: { i: String(i) } },
      });
      expect(created.status).toBe(201); // never a false error
    }
    const ready = await server.request('/readyz', { anonymous: true });
    expect(ready.status).toBe(500);
    expect(ready.text).toBe(
      '[+]ping ok\n[+]shutdown ok\n[-]store failed: reason withheld\nreadyz check failed\n',
    );
    const one = await server.request('/readyz/store', { anonymous: true });
    expect(one.text).toMatch(
      /^internal server error: \d+ snapshot attempt\(s\) failed, writes still durable \(snapshot failed \(ENOSPC\): /,
    );
    // The store still takes writes, so the process is alive: a restart would not help.
    expect((await server.request('/livez', { anonymous: true })).status).toBe(200);

    // The disk has room again; the snapshot is retried on the first write after its backoff.
    full = false;
    await clock.advance(60_000);
    await server.request('/api/v1/namespaces/default/configmaps', {
      method: 'POST',
      body: { metadata: { name: 'after' }, data: {} },
    });
    expect((await server.request('/readyz', { anonymous: true })).status).toBe(200);
  });
});
