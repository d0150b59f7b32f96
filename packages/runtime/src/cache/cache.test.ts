import { describe, expect, it } from 'vitest';
import { AbortedError, OptionsError } from '../errors.ts';
import { MemoryLogger } from '../log/index.ts';
import type { KubeObject } from '../object/index.ts';
import { parseLabelSelector } from '../selector/index.ts';
import {
  CacheClosedError,
  CacheErrorCodes,
  createCache,
  IndexExistsError,
  IndexNotFoundError,
  InvalidObjectError,
  StageFinishedError,
} from './index.ts';

interface Pod extends KubeObject {
  readonly spec: { nodeName?: string; containers: { image: string }[] };
}

function pod(
  name: string,
  options: { ns?: string; rv?: string; node?: string; labels?: Record<string, string> } = {},
): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: options.ns ?? 'default',
      resourceVersion: options.rv ?? '1',
      ...(options.labels === undefined ? {} : { labels: options.labels }),
    },
    spec: {
      ...(options.node === undefined ? {} : { nodeName: options.node }),
      containers: [{ image: 'nginx' }],
    },
  };
}

const byNode = (p: Pod): readonly string[] => (p.spec.nodeName === undefined ? [] : [p.spec.nodeName]);
const names = (objects: readonly KubeObject[]): string[] => objects.map((o) => o.metadata.name ?? '').sort();

describe('cache reads', () => {
  it('gets an object by key and returns undefined for an unknown key', () => {
    const { reader, writer } = createCache<Pod>();
    writer.apply({ type: 'ADDED', object: pod('a') });
    expect(reader.get({ namespace: 'default', name: 'a' })?.metadata.name).toBe('a');
    expect(reader.get({ namespace: 'other', name: 'a' })).toBeUndefined();
    expect(reader.size).toBe(1);
  });

  it('lists by namespace, by label selector string or expression, and by index, combined with AND', () => {
    const { reader, writer } = createCache<Pod>({ indexes: { node: byNode } });
    writer.replace(
      [
        pod('a', { ns: 'x', node: 'n1', labels: { app: 'web' } }),
        pod('b', { ns: 'x', node: 'n2', labels: { app: 'db' } }),
        pod('c', { ns: 'y', node: 'n1', labels: { app: 'web' } }),
        pod('d', { ns: 'y', labels: {} }),
      ],
      '9',
    );
    expect(names(reader.list())).toEqual(['a', 'b', 'c', 'd']);
    expect(names(reader.list({ namespace: '' }))).toEqual(['a', 'b', 'c', 'd']);
    expect(names(reader.list({ namespace: 'x' }))).toEqual(['a', 'b']);
    expect(names(reader.list({ labelSelector: 'app=web' }))).toEqual(['a', 'c']);
    expect(names(reader.list({ labelSelector: parseLabelSelector('app!=web') }))).toEqual(['b', 'd']);
    expect(names(reader.list({ index: { name: 'node', value: 'n1' } }))).toEqual(['a', 'c']);
    expect(names(reader.list({ namespace: 'y', index: { name: 'node', value: 'n1' } }))).toEqual(['c']);
    expect(
      names(reader.list({ namespace: 'x', labelSelector: 'app', index: { name: 'node', value: 'n2' } })),
    ).toEqual(['b']);
  });

  it('has a built-in namespace index and throws IndexNotFoundError for an unknown index', () => {
    const { reader, writer } = createCache<Pod>();
    writer.replace([pod('a', { ns: 'x' }), pod('b', { ns: 'y' })], '1');
    expect(names(reader.byIndex('namespace', 'x'))).toEqual(['a']);
    expect(() => reader.byIndex('owner', 'u1')).toThrow(IndexNotFoundError);
    expect(() => reader.list({ index: { name: 'owner', value: 'u1' } })).toThrow(IndexNotFoundError);
  });

  it('lists keys of every object, cluster-scoped ones with namespace ""', () => {
    const { reader, writer } = createCache();
    writer.apply({ type: 'ADDED', object: { metadata: { name: 'n1' } } });
    writer.apply({ type: 'ADDED', object: { metadata: { name: 'p', namespace: 'ns' } } });
    expect(reader.keys()).toEqual(
      expect.arrayContaining([
        { namespace: '', name: 'n1' },
        { namespace: 'ns', name: 'p' },
      ]),
    );
    expect(reader.keys()).toHaveLength(2);
  });

  it('rejects a bad label selector with the parse error', () => {
    const { reader } = createCache();
    expect(() => reader.list({ labelSelector: 'a in (' })).toThrow(/selector/);
  });
});

describe('frozen, shared objects', () => {
  it('hands every reader the same deep-frozen object, never a copy', () => {
    const { reader, writer } = createCache<Pod>();
    const written = pod('a');
    writer.apply({ type: 'ADDED', object: written });
    const read = reader.get({ namespace: 'default', name: 'a' }) as Pod;
    expect(read).toBe(written);
    expect(reader.list()[0]).toBe(written);
    expect(Object.isFrozen(read)).toBe(true);
    expect(Object.isFrozen(read.metadata)).toBe(true);
    expect(Object.isFrozen(read.spec.containers[0])).toBe(true);
    expect(() => {
      (read.spec.containers[0] as { image: string }).image = 'evil';
    }).toThrow(TypeError);
  });
});

describe('cache writes', () => {
  it('turns an ADDED for a known key into an update and ignores a DELETED for an unknown key', () => {
    const { reader, writer } = createCache<Pod>();
    expect(writer.apply({ type: 'ADDED', object: pod('a', { rv: '1' }) }).type).toBe('created');
    const again = writer.apply({ type: 'ADDED', object: pod('a', { rv: '2' }) });
    expect(again).toMatchObject({ type: 'updated', oldObject: { metadata: { resourceVersion: '1' } } });
    expect(writer.apply({ type: 'DELETED', object: pod('ghost', { rv: '3' }) })).toEqual({
      type: 'unchanged',
    });
    expect(reader.size).toBe(1);
    expect(reader.resourceVersion).toBe('3');
  });

  it('reports a delete with the state the event carried and the state the cache held', () => {
    const { reader, writer } = createCache<Pod>();
    writer.apply({ type: 'ADDED', object: pod('a', { rv: '1' }) });
    const change = writer.apply({ type: 'DELETED', object: pod('a', { rv: '5' }) });
    expect(change).toMatchObject({
      type: 'deleted',
      object: { metadata: { resourceVersion: '5' } },
      cached: { metadata: { resourceVersion: '1' } },
    });
    expect(reader.size).toBe(0);
  });

  it('moves resourceVersion on a bookmark without touching objects', () => {
    const { reader, writer } = createCache<Pod>();
    writer.apply({ type: 'ADDED', object: pod('a', { rv: '1' }) });
    expect(writer.apply({ type: 'BOOKMARK', resourceVersion: '40' })).toEqual({ type: 'unchanged' });
    expect(reader.resourceVersion).toBe('40');
    expect(reader.size).toBe(1);
  });

  it('refuses an object without metadata.name', () => {
    const { writer } = createCache();
    expect(() => writer.apply({ type: 'ADDED', object: { metadata: {} } })).toThrow(InvalidObjectError);
    expect(() => writer.replace([{ metadata: { name: '' } }], '1')).toThrow(InvalidObjectError);
  });

  it('replaces the contents at once and reports creates, updates, deletes and unchanged objects', () => {
    const { reader, writer } = createCache<Pod>();
    writer.replace([pod('keep', { rv: '1' }), pod('change', { rv: '1' }), pod('gone', { rv: '1' })], '1');
    const kept = reader.get({ namespace: 'default', name: 'keep' });
    const result = writer.replace(
      [pod('keep', { rv: '1' }), pod('change', { rv: '2' }), pod('new', { rv: '3' })],
      '3',
    );
    expect(names(result.created)).toEqual(['new']);
    expect(
      result.updated.map((u) => [u.oldObject.metadata.resourceVersion, u.object.metadata.resourceVersion]),
    ).toEqual([['1', '2']]);
    expect(names(result.deleted)).toEqual(['gone']);
    expect(result.unchanged).toBe(1);
    expect(reader.get({ namespace: 'default', name: 'keep' })).toBe(kept);
    expect(names(reader.list())).toEqual(['change', 'keep', 'new']);
    expect(reader.resourceVersion).toBe('3');
  });

  it('shows readers the old contents until a staged replace commits, and nothing of a discarded one', () => {
    const { reader, writer } = createCache<Pod>();
    writer.replace([pod('old')], '1');
    const stage = writer.stage();
    stage.add(pod('new1'));
    stage.add(pod('new2'));
    expect(stage.size).toBe(2);
    expect(names(reader.list())).toEqual(['old']);
    stage.discard();
    expect(names(reader.list())).toEqual(['old']);
    expect(() => stage.commit('2')).toThrow(StageFinishedError);
    const next = writer.stage();
    next.add(pod('new1'));
    next.commit('2');
    expect(names(reader.list())).toEqual(['new1']);
    expect(() => next.add(pod('late'))).toThrow(StageFinishedError);
  });

  it('reports the diff against the contents at commit time, even when the cache was written to while the stage was open', () => {
    const { reader, writer } = createCache<Pod>();
    writer.replace([pod('a', { rv: '1' }), pod('b', { rv: '1' })], '1');
    const stage = writer.stage();
    stage.add(pod('a', { rv: '1' }));
    stage.add(pod('b', { rv: '1' }));
    stage.add(pod('c', { rv: '3' }));
    writer.apply({ type: 'DELETED', object: pod('a', { rv: '2' }) });
    writer.apply({ type: 'ADDED', object: pod('c', { rv: '2' }) });
    const result = stage.commit('3');
    expect(names(result.created)).toEqual(['a']);
    expect(result.updated.map((u) => u.object.metadata.name)).toEqual(['c']);
    expect(result.deleted).toEqual([]);
    expect(result.unchanged).toBe(1);
    expect(names(reader.list())).toEqual(['a', 'b', 'c']);
  });

  it('reports one change per key when a key is staged twice, the last one winning', () => {
    const { reader, writer } = createCache<Pod>();
    writer.replace([pod('a', { rv: '1' })], '1');
    const result = writer.replace(
      [pod('a', { rv: '2' }), pod('a', { rv: '3' }), pod('n', { rv: '4' }), pod('n', { rv: '5' })],
      '5',
    );
    expect(result.updated.map((u) => u.object.metadata.resourceVersion)).toEqual(['3']);
    expect(result.created.map((o) => o.metadata.resourceVersion)).toEqual(['5']);
    expect(reader.get({ namespace: 'default', name: 'a' })?.metadata.resourceVersion).toBe('3');
  });
});

describe('custom indexes', () => {
  it('keeps an index up to date when an object moves between values and when it is deleted', () => {
    const { reader, writer } = createCache<Pod>();
    writer.indexField('node', byNode);
    writer.apply({ type: 'ADDED', object: pod('a', { node: 'n1' }) });
    expect(names(reader.byIndex('node', 'n1'))).toEqual(['a']);
    writer.apply({ type: 'MODIFIED', object: pod('a', { node: 'n2', rv: '2' }) });
    expect(reader.byIndex('node', 'n1')).toEqual([]);
    expect(reader.byIndex('node', 'n2')[0]?.metadata.resourceVersion).toBe('2');
    writer.apply({ type: 'DELETED', object: pod('a', { node: 'n2', rv: '3' }) });
    expect(reader.byIndex('node', 'n2')).toEqual([]);
    expect(reader.stats()).toEqual({
      objects: 0,
      namespaces: 0,
      indexes: { node: { values: 0, objects: 0 } },
    });
  });

  it('indexes objects already cached when an index is added, and indexes added during a staged replace', () => {
    const { reader, writer } = createCache<Pod>();
    writer.replace([pod('a', { node: 'n1' })], '1');
    writer.indexField('node', byNode);
    expect(names(reader.byIndex('node', 'n1'))).toEqual(['a']);
    const stage = writer.stage();
    stage.add(pod('b', { node: 'n1', labels: { tier: 'x' } }));
    writer.indexField('tier', (p) => (p.metadata.labels?.tier === undefined ? [] : [p.metadata.labels.tier]));
    stage.commit('2');
    expect(names(reader.byIndex('tier', 'x'))).toEqual(['b']);
    expect(names(reader.byIndex('node', 'n1'))).toEqual(['b']);
  });

  it('refuses a second index with the same name or the reserved namespace name', () => {
    const { writer } = createCache<Pod>();
    writer.indexField('node', byNode);
    expect(() => writer.indexField('node', byNode)).toThrow(IndexExistsError);
    expect(() => writer.indexField('namespace', byNode)).toThrow(IndexExistsError);
    expect(() => writer.indexField('', byNode)).toThrow(OptionsError);
  });

  it('stores an object whose index function throws, indexes it under nothing and logs the failure', () => {
    const logger = new MemoryLogger();
    const { reader, writer } = createCache<Pod>({ logger, name: 'pods' });
    writer.indexField('bad', (p) => {
      if (p.metadata.name === 'boom') throw new Error('boom');
      return ['v'];
    });
    writer.indexField('wrong', () => [42] as unknown as string[]);
    writer.apply({ type: 'ADDED', object: pod('boom') });
    writer.apply({ type: 'ADDED', object: pod('fine') });
    expect(reader.size).toBe(2);
    expect(names(reader.byIndex('bad', 'v'))).toEqual(['fine']);
    const failures = logger.records.filter((r) => r.message === 'Cache index function failed');
    expect(failures.map((r) => r.fields.index)).toEqual(['bad', 'wrong', 'wrong']);
    expect((failures[0]?.fields.err as { code?: string } | undefined)?.code).toBe(
      CacheErrorCodes.INDEX_FUNCTION_FAILED,
    );
  });

  it('indexes an object once per distinct value', () => {
    const { reader, writer } = createCache<Pod>();
    writer.indexField('dup', () => ['v', 'v', 'w']);
    writer.apply({ type: 'ADDED', object: pod('a') });
    expect(reader.byIndex('dup', 'v')).toHaveLength(1);
    expect(reader.stats().indexes.dup).toEqual({ values: 2, objects: 1 });
  });
});

describe('sync and close', () => {
  it('resolves waitForSync once the writer marks the cache synced', async () => {
    const { reader, writer } = createCache();
    let synced = false;
    const waiting = reader.waitForSync().then(() => {
      synced = true;
    });
    await Promise.resolve();
    expect(synced).toBe(false);
    expect(reader.hasSynced()).toBe(false);
    writer.markSynced();
    await waiting;
    expect(reader.hasSynced()).toBe(true);
  });

  it('rejects waitForSync when the writer closes before the cache synced, and refuses writes after close', async () => {
    const { reader, writer } = createCache();
    const waiting = reader.waitForSync();
    writer.close();
    await expect(waiting).rejects.toBeInstanceOf(CacheClosedError);
    await expect(reader.waitForSync()).rejects.toBeInstanceOf(CacheClosedError);
    expect(() => writer.apply({ type: 'ADDED', object: { metadata: { name: 'a' } } })).toThrow(
      CacheClosedError,
    );
    expect(() => writer.stage()).toThrow(CacheClosedError);
    expect(writer.closed).toBe(true);
  });

  it('keeps a synced cache synced and readable after close', async () => {
    const { reader, writer } = createCache();
    writer.replace([{ metadata: { name: 'a' } }], '1');
    writer.markSynced();
    writer.close();
    await expect(reader.waitForSync()).resolves.toBeUndefined();
    expect(reader.size).toBe(1);
  });

  it('rejects waitForSync with an AbortedError when its signal aborts first', async () => {
    const { reader } = createCache();
    const controller = new AbortController();
    const waiting = reader.waitForSync(controller.signal);
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(AbortedError);
  });

  it('validates its options', () => {
    expect(() => createCache({ name: '' })).toThrow(OptionsError);
    expect(() => createCache({ indexes: { x: 'nope' as unknown as () => string[] } })).toThrow(OptionsError);
  });
});
