import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VirtualClock } from '@converge/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './test-support.ts';

let t: TestServer;
const CM = '/api/v1/namespaces/default/configmaps';
const MERGE = { 'content-type': 'application/merge-patch+json' };

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

async function currentRv(): Promise<string> {
  return ((await t.request(CM)).json as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
}

/** A watch read with node:http that also counts the response's body pieces ('data' events). */
function rawWatch(path: string): Promise<{
  readonly lines: string[];
  readonly pieces: () => number;
  waitForLines(count: number): Promise<void>;
  close(): void;
}> {
  return new Promise((resolve, reject) => {
    const lines: string[] = [];
    let pieces = 0;
    let rest = '';
    let wake = (): void => {};
    const req = request(
      new URL(path, t.url),
      { headers: { authorization: `Bearer ${t.server.token ?? ''}` } },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (text: string) => {
          pieces++;
          const parts = (rest + text).split('\n');
          rest = parts.pop() ?? '';
          lines.push(...parts);
          wake();
        });
        res.on('error', () => {});
        resolve({
          lines,
          pieces: () => pieces,
          // Bounded: a line that never comes fails the test instead of hanging it.
          waitForLines: (count) =>
            new Promise<void>((ok, fail) => {
              const timer = setTimeout(() => fail(new Error(`${lines.length} of ${count} lines`)), 5_000);
              wake = () => {
                if (lines.length < count) return;
                clearTimeout(timer);
                ok();
              };
              wake();
            }),
          close: () => req.destroy(),
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('watch', () => {
  it('flushes a chunked 200 at once, before any event exists', async () => {
    const rv = await currentRv();
    // No event will come and the watch lasts an hour: headers that waited for an event or for the
    // end would never arrive, and the test would time out. No clock is needed.
    const w = await t.watch(`${CM}?watch=true&resourceVersion=${rv}&timeoutSeconds=3600`);
    expect(w.status).toBe(200);
    expect(w.headers['content-type']).toBe('application/json');
    expect(w.headers['transfer-encoding']).toBe('chunked');
    expect(w.events).toEqual([]);
    w.abort();
  });

  it('streams ADDED, MODIFIED and DELETED as newline-delimited events with kind and apiVersion', async () => {
    const rv = await currentRv();
    const w = await t.watch(`${CM}?watch=1&resourceVersion=${rv}`);
    await t.request(CM, { method: 'POST', body: { metadata: { name: 'w1' } } });
    await t.request(`${CM}/w1`, { method: 'PATCH', body: { data: { a: '1' } }, headers: MERGE });
    await t.request(`${CM}/w1`, { method: 'DELETE' });
    await w.waitFor(3);
    expect(w.events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    expect(w.events.every((e) => e.object.kind === 'ConfigMap' && e.object.apiVersion === 'v1')).toBe(true);
    w.abort();
  });

  it('starts with synthetic ADDED events when resourceVersion is unset', async () => {
    await t.request(CM, { method: 'POST', body: { metadata: { name: 'initial' } } });
    const w = await t.watch(`${CM}?watch=true&fieldSelector=metadata.name%3Dinitial`);
    await w.waitFor(1);
    expect(w.events[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'initial' } } });
    w.abort();
  });

  it('watches a single object by name', async () => {
    const rv = await currentRv();
    const w = await t.watch(`${CM}/single?watch=true&resourceVersion=${rv}`);
    await t.request(CM, { method: 'POST', body: { metadata: { name: 'other' } } });
    await t.request(CM, { method: 'POST', body: { metadata: { name: 'single' } } });
    await w.waitFor(1);
    expect(w.events.map((e) => (e.object.metadata as { name: string }).name)).toEqual(['single']);
    w.abort();
  });

  it('ends cleanly at timeoutSeconds, and sends BOOKMARKs (on the injected clock) when allowed', async () => {
    const clock = new VirtualClock({ startMs: Date.parse('2025-01-01T00:00:00Z') });
    const v = await startTestServer({ clock });
    try {
      const rv = ((await v.request(CM)).json as { metadata: { resourceVersion: string } }).metadata
        .resourceVersion;
      const plain = await v.watch(`${CM}?watch=true&resourceVersion=${rv}&timeoutSeconds=120`);
      const marked = await v.watch(
        `${CM}?watch=true&resourceVersion=${rv}&timeoutSeconds=120&allowWatchBookmarks=true`,
      );
      await clock.advance(60_000);
      await marked.waitFor(1);
      expect(marked.events[0]).toMatchObject({
        type: 'BOOKMARK',
        object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: rv } },
      });
      expect(plain.events).toEqual([]);
      await clock.advance(60_000);
      expect(await plain.ended).toBe('clean');
      expect(await marked.ended).toBe('clean');
      expect(marked.events.every((e) => e.type === 'BOOKMARK')).toBe(true);
    } finally {
      await v.close();
    }
  });

  it('answers a too-old resourceVersion with 200, one ERROR event carrying a 410 Expired Status, and a clean end', async () => {
    const rv = await currentRv();
    await t.request(CM, { method: 'POST', body: { metadata: { name: 'bump' } } });
    t.server.store.compact();
    const w = await t.watch(`${CM}?watch=true&resourceVersion=${rv}`);
    expect(w.status).toBe(200);
    expect(await w.ended).toBe('clean');
    expect(w.events).toHaveLength(1);
    expect(w.events[0]).toMatchObject({
      type: 'ERROR',
      object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410 },
    });
    expect(w.events[0]?.object.message).toMatch(/^too old resource version: \d+ \(\d+\)$/);
  });

  it('answers a watch from resourceVersion 1 with 410 Expired once the history window (5 min) has dropped the events after it', async () => {
    const clock = new VirtualClock({ startMs: Date.parse('2025-01-01T00:00:00Z') });
    const v = await startTestServer({ clock });
    try {
      await v.request(CM, { method: 'POST', body: { metadata: { name: 'early' } } });
      // inside the window the history is still there: the watch replays the create
      const replay = await v.watch(`${CM}?watch=true&resourceVersion=1&timeoutSeconds=1`);
      await replay.waitFor(1);
      expect(replay.events[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'early' } } });
      replay.abort();
      await clock.advance(300_001);
      const { compactedRevision } = v.server.store.history();
      const w = await v.watch(`${CM}?watch=true&resourceVersion=1`);
      expect(w.status).toBe(200);
      expect(await w.ended).toBe('clean');
      expect(w.events).toEqual([
        {
          type: 'ERROR',
          object: {
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Failure',
            message: `too old resource version: 1 (${compactedRevision})`,
            reason: 'Expired',
            details: {},
            code: 410,
          },
        },
      ]);
    } finally {
      await v.close();
    }
  });

  it('answers 410 Expired to a watch from before the store was reopened: its start is the compaction point', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'converge-watch-'));
    try {
      const first = await startTestServer({ dataDir: dir });
      await first.request(CM, { method: 'POST', body: { metadata: { name: 'kept' } } });
      const before = ((await first.request(CM)).json as { metadata: { resourceVersion: string } }).metadata
        .resourceVersion;
      await first.close();
      const second = await startTestServer({ dataDir: dir });
      try {
        const w = await second.watch(`${CM}?watch=true&resourceVersion=1`);
        expect(await w.ended).toBe('clean');
        expect(w.events).toHaveLength(1);
        expect(w.events[0]).toMatchObject({ type: 'ERROR', object: { reason: 'Expired', code: 410 } });
        expect(w.events[0]?.object.message).toBe(
          `too old resource version: 1 (${second.server.store.history().compactedRevision})`,
        );
        expect(second.server.store.history().compactedRevision).toBeGreaterThanOrEqual(Number(before));
        // the list's resourceVersion is where a client resumes: that works
        const rv = ((await second.request(CM)).json as { metadata: { resourceVersion: string } }).metadata
          .resourceVersion;
        const resumed = await second.watch(`${CM}?watch=true&resourceVersion=${rv}`);
        await second.request(CM, { method: 'POST', body: { metadata: { name: 'after' } } });
        await resumed.waitFor(1);
        expect(resumed.events[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'after' } } });
        resumed.abort();
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('implements sendInitialEvents: initial ADDED, then the initial-events-end BOOKMARK, then live events', async () => {
    await t.request('/api/v1/namespaces', { method: 'POST', body: { metadata: { name: 'sie' } } });
    for (const name of ['a', 'b'])
      await t.request('/api/v1/namespaces/sie/configmaps', { method: 'POST', body: { metadata: { name } } });
    const w = await t.watch(
      '/api/v1/namespaces/sie/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true',
    );
    await w.waitFor(3);
    expect(w.events.slice(0, 2).map((e) => e.type)).toEqual(['ADDED', 'ADDED']);
    expect(w.events[2]).toMatchObject({
      type: 'BOOKMARK',
      object: { metadata: { annotations: { 'k8s.io/initial-events-end': 'true' } } },
    });
    await t.request('/api/v1/namespaces/sie/configmaps', {
      method: 'POST',
      body: { metadata: { name: 'c' } },
    });
    await w.waitFor(4);
    expect(w.events[3]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'c' } } });
    w.abort();
  });

  it('sends a burst of events in a few large chunks, then a lone live event without waiting for more', async () => {
    const namespace = 'burst';
    await t.request('/api/v1/namespaces', { method: 'POST', body: { metadata: { name: namespace } } });
    const type = t.server.store.resolveType('v1', 'ConfigMap');
    if (type === undefined) throw new Error('ConfigMap is not served');
    const count = 600;
    await Promise.all(
      Array.from({ length: count }, (_, i) =>
        t.server.store.create(type, {
          metadata: { name: `cm-${String(i).padStart(3, '0')}`, namespace },
          data: { value: 'x'.repeat(300) },
        }),
      ),
    );
    const path = `/api/v1/namespaces/${namespace}/configmaps`;
    const w = await rawWatch(
      `${path}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
    );
    try {
      await w.waitForLines(count + 1);
      const events = w.lines.map(
        (line) => JSON.parse(line) as { type: string; object: Record<string, unknown> },
      );
      expect(events.slice(0, count).every((e) => e.type === 'ADDED')).toBe(true);
      expect(
        new Set(events.slice(0, count).map((e) => (e.object.metadata as { name: string }).name)).size,
      ).toBe(count);
      expect(events[count]).toMatchObject({
        type: 'BOOKMARK',
        object: { metadata: { annotations: { 'k8s.io/initial-events-end': 'true' } } },
      });
      // ~250 KB of events: a handful of 64 KiB chunks, not one chunk (one 'data' event) per event.
      expect(w.pieces()).toBeLessThan(count / 10);
      // Nothing else happens on this watch: the single live event must go out on its own.
      await t.request(path, { method: 'POST', body: { metadata: { name: 'live' } } });
      await w.waitForLines(count + 2);
      expect(JSON.parse(w.lines[count + 1] ?? '')).toMatchObject({
        type: 'ADDED',
        object: { metadata: { name: 'live' } },
      });
    } finally {
      w.close();
    }
  });

  it('rejects sendInitialEvents without resourceVersionMatch=NotOlderThan with a 422 before streaming', async () => {
    const res = await t.request(`${CM}?watch=true&sendInitialEvents=true`);
    expect(res.status).toBe(422);
    expect(res.json).toMatchObject({
      reason: 'Invalid',
      details: { kind: 'ListOptions', causes: [{ field: 'resourceVersionMatch' }] },
    });
  });

  it('reports an object leaving a label selector as DELETED', async () => {
    await t.request(CM, { method: 'POST', body: { metadata: { name: 'lab', labels: { app: 'x' } } } });
    const rv = await currentRv();
    const w = await t.watch(`${CM}?watch=true&labelSelector=app%3Dx&resourceVersion=${rv}`);
    await t.request(`${CM}/lab`, {
      method: 'PATCH',
      body: { metadata: { labels: { app: 'y' } } },
      headers: MERGE,
    });
    await w.waitFor(1);
    expect(w.events[0]).toMatchObject({
      type: 'DELETED',
      object: { metadata: { name: 'lab', labels: { app: 'x' } } },
    });
    w.abort();
  });

  it('applies kind-specific field selectors with enter/stay/leave semantics', async () => {
    const path = '/api/v1/namespaces/default/events';
    await t.request(path, {
      method: 'POST',
      body: {
        metadata: { name: 'ev' },
        involvedObject: { kind: 'Pod', name: 'p1', namespace: 'default' },
        reason: 'A',
      },
    });
    const rv = await currentRv();
    const w = await t.watch(`${path}?watch=true&resourceVersion=${rv}&fieldSelector=reason%3DA`);
    await t.request(`${path}/ev`, { method: 'PATCH', body: { message: 'x' }, headers: MERGE });
    await t.request(`${path}/ev`, { method: 'PATCH', body: { reason: 'B' }, headers: MERGE });
    await t.request(`${path}/ev`, { method: 'PATCH', body: { reason: 'A' }, headers: MERGE });
    await w.waitFor(3);
    expect(w.events.map((e) => e.type)).toEqual(['MODIFIED', 'DELETED', 'ADDED']);
    w.abort();
  });

  it('ends every open watch cleanly on dropWatches, and forgets watches the client closed', async () => {
    const rv = await currentRv();
    const a = await t.watch(`${CM}?watch=true&resourceVersion=${rv}`);
    const b = await t.watch(`/api/v1/namespaces?watch=true&resourceVersion=${rv}`);
    expect(t.server.openWatches).toBe(2);
    expect(t.server.dropWatches()).toBe(2);
    expect(await a.ended).toBe('clean');
    expect(await b.ended).toBe('clean');
    const c = await t.watch(`${CM}?watch=true&resourceVersion=${rv}`);
    c.abort();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(t.server.openWatches).toBe(0);
  });
});
