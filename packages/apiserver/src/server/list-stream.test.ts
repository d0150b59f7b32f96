import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { streamList } from './list-stream.ts';
import { startTestServer } from './test-support.ts';

/** A response whose socket buffer is always full: every write needs a 'drain'. */
class FullSocketResponse extends EventEmitter {
  readonly chunks: string[] = [];
  writableNeedDrain = false;
  destroyed = false;
  ended = false;
  status = 0;

  writeHead(status: number): this {
    this.status = status;
    return this;
  }

  write(chunk: string): boolean {
    this.chunks.push(chunk);
    this.writableNeedDrain = true;
    return false;
  }

  end(chunk: string): void {
    this.chunks.push(chunk);
    this.ended = true;
  }

  drain(): void {
    this.writableNeedDrain = false;
    this.emit('drain');
  }
}

const items = Array.from({ length: 5_000 }, (_, i) => ({
  metadata: { name: `item-${i}` },
  data: { value: 'x'.repeat(40) },
}));

describe('streamed lists', () => {
  it('writes items in chunks and waits for the socket to drain before writing more', async () => {
    const res = new FullSocketResponse();
    const done = streamList(
      res as unknown as ServerResponse,
      { kind: 'ThingList', apiVersion: 'v1', metadata: { resourceVersion: '7' } },
      items,
      (i) => JSON.stringify(i),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(res.chunks).toHaveLength(1);
    // Still one chunk a turn later: nothing more is written until the socket drains.
    await new Promise((resolve) => setImmediate(resolve));
    expect(res.chunks).toHaveLength(1);
    res.drain();
    // After the drain the writer also yields one event-loop turn before the next chunk.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(res.chunks).toHaveLength(2);
    while (!res.ended) {
      res.drain();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await done;
    expect(res.chunks.length).toBeGreaterThan(3);
    const body = JSON.parse(res.chunks.join('')) as { kind: string; metadata: unknown; items: unknown[] };
    expect(body.kind).toBe('ThingList');
    expect(body.metadata).toEqual({ resourceVersion: '7' });
    expect(body.items).toEqual(items);
  });

  it('stops writing when the client goes away', async () => {
    const res = new FullSocketResponse();
    const done = streamList(
      res as unknown as ServerResponse,
      { kind: 'ThingList', apiVersion: 'v1', metadata: {} },
      items,
      (i) => JSON.stringify(i),
    );
    await new Promise((resolve) => setImmediate(resolve));
    res.destroyed = true;
    res.emit('close');
    await done;
    expect(res.ended).toBe(false);
    expect(res.chunks).toHaveLength(1);
  });

  it('serves a large LIST over HTTP as one consistent document', async () => {
    const t = await startTestServer();
    try {
      const type = t.server.store.resolveType('v1', 'ConfigMap');
      if (type === undefined) throw new Error('ConfigMap is not served');
      await Promise.all(
        Array.from({ length: 3_000 }, (_, i) =>
          t.server.store.create(type, {
            metadata: { name: `cm-${i}`, namespace: 'default' },
            data: { i: String(i) },
          }),
        ),
      );
      const res = await t.request('/api/v1/namespaces/default/configmaps');
      const list = res.json as { items: { metadata: { name: string } }[] };
      expect(res.headers['transfer-encoding']).toBe('chunked');
      expect(list.items).toHaveLength(3_000);
      expect(new Set(list.items.map((i) => i.metadata.name)).size).toBe(3_000);
    } finally {
      await t.close();
    }
  });
});
