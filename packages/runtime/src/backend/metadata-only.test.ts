import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../object/index.ts';
import type { WatchEvent } from './backend.ts';
import { metadataOnlyEvents, metadataOnlyList } from './metadata-only.ts';
import { resourceType } from './resource-type.ts';

const secrets = resourceType({
  group: '',
  version: 'v1',
  kind: 'Secret',
  plural: 'secrets',
  namespaced: true,
});
const secret = (name: string): KubeObject & { data: Record<string, string> } => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: 'a', resourceVersion: '3' },
  data: { password: 'aHVudGVyMg==' },
});

async function* events(list: readonly WatchEvent[], closed: { value: boolean }): AsyncGenerator<WatchEvent> {
  try {
    yield* list;
  } finally {
    closed.value = true;
  }
}

describe('metadata-only projections of a backend', () => {
  it('a list keeps its resourceVersion, continue and count, and each item only its metadata', () => {
    const page = {
      items: [secret('a'), secret('b')],
      resourceVersion: '9',
      continue: 'next',
      remainingItemCount: 2,
    };
    expect(metadataOnlyList(secrets, page)).toEqual({
      items: [
        { apiVersion: 'v1', kind: 'Secret', metadata: secret('a').metadata },
        { apiVersion: 'v1', kind: 'Secret', metadata: secret('b').metadata },
      ],
      resourceVersion: '9',
      continue: 'next',
      remainingItemCount: 2,
    });
  });

  it('a watch projects every object event, passes bookmarks and the purged flag, and closes the source with it', async () => {
    const closed = { value: false };
    const source: WatchEvent[] = [
      { type: 'ADDED', object: secret('a') },
      { type: 'BOOKMARK', resourceVersion: '4' },
      { type: 'DELETED', object: secret('a'), purged: true },
      { type: 'ADDED', object: secret('never read') },
    ];
    const seen: WatchEvent[] = [];
    for await (const event of metadataOnlyEvents(secrets, events(source, closed))) {
      seen.push(event);
      if (seen.length === 3) break;
    }
    const a = { apiVersion: 'v1', kind: 'Secret', metadata: secret('a').metadata };
    expect(seen).toEqual([
      { type: 'ADDED', object: a },
      { type: 'BOOKMARK', resourceVersion: '4' },
      { type: 'DELETED', object: a, purged: true },
    ]);
    expect(closed.value, 'breaking out of the projected watch ends the source').toBe(true);
  });

  it('a watch surfaces the source’s error from its iteration', async () => {
    async function* failing(): AsyncGenerator<WatchEvent> {
      yield { type: 'ADDED', object: secret('a') };
      throw new Error('gone');
    }
    const iterator = metadataOnlyEvents(secrets, failing())[Symbol.asyncIterator]();
    await iterator.next();
    await expect(iterator.next()).rejects.toThrow('gone');
  });
});
