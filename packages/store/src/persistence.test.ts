import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExpiredError, type KubeObject } from '@converge/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreCorruptError } from './errors.ts';
import { encodeRecord, frame, LOG_FILE, LOG_MAGIC, logHeader } from './persistence/index.ts';
import type { Store } from './store.ts';
import type { StoreOptions } from './store-options.ts';
import {
  CM,
  type ConfigMap,
  cm,
  makeStore,
  ownerRef,
  WIDGET,
  type Widget,
  widget,
} from './testdata/fixtures.ts';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'converge-store-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function open(dataDir: string, options: StoreOptions = {}): Store {
  return makeStore({ dataDir, ...options }).store;
}

async function contents(store: Store, type = CM): Promise<KubeObject[]> {
  return [...(await store.list(type)).items];
}

describe('persistence', () => {
  it('after a restart every object, resourceVersion and the revision counter are as before', async () => {
    const dir = tempDir();
    const first = open(dir);
    await first.create(CM, cm('a', { v: '1' }));
    const b = await first.create<ConfigMap>(CM, cm('b', { v: '1' }));
    await first.update(CM, { ...b, data: { v: '2' } });
    await first.create(WIDGET, widget('w'));
    await first.delete(CM, { namespace: 'default', name: 'a' });
    const before = {
      cms: await contents(first),
      widgets: await contents(first, WIDGET),
      revision: first.revision,
    };
    await first.close();
    const second = open(dir);
    expect(await contents(second)).toEqual(before.cms);
    expect(await contents(second, WIDGET)).toEqual(before.widgets);
    expect(second.revision).toBe(before.revision);
    const next = await second.create(CM, cm('c'));
    expect(Number(next.metadata.resourceVersion)).toBe(before.revision + 1);
    await second.close();
  });

  it('the revision never goes backwards, also when the last write was a delete or after a snapshot', async () => {
    const dir = tempDir();
    const first = open(dir, { snapshotEveryRecords: 2 });
    for (const name of ['a', 'b', 'c']) await first.create(CM, cm(name));
    for (const name of ['a', 'b', 'c']) await first.delete(CM, { namespace: 'default', name });
    const revision = first.revision;
    await first.close();
    const second = open(dir);
    expect(second.revision).toBe(revision);
    expect(await contents(second)).toEqual([]);
    await second.close();
  });

  it('snapshot() writes a snapshot and restarts the log; reopening loads the snapshot and replays the log after it', async () => {
    const dir = tempDir();
    const first = open(dir);
    await first.create(CM, cm('a'));
    await first.create(CM, cm('b'));
    first.snapshot();
    expect(statSync(join(dir, LOG_FILE)).size).toBe(logHeader(first.revision).length);
    await first.create(CM, cm('c'));
    await first.delete(CM, { namespace: 'default', name: 'a' });
    const expected = await contents(first);
    await first.close();
    const second = open(dir);
    expect(await contents(second)).toEqual(expected);
    await second.close();
  });

  it('a torn last record is dropped and the file truncated; everything before it survives', async () => {
    const dir = tempDir();
    const first = open(dir);
    await first.create(CM, cm('a'));
    await first.create(CM, cm('b'));
    await first.close();
    const log = join(dir, LOG_FILE);
    const good = statSync(log).size;
    // A crash in the middle of appending: only a prefix of the next record reached the disk.
    const next = frame(
      encodeRecord({ revision: 4, typeId: '/v1/configmaps', key: 'default\u0000c', object: undefined }),
    );
    appendFileSync(log, next.subarray(0, next.length - 3));
    const second = open(dir);
    expect(statSync(log).size).toBe(good);
    expect((await contents(second)).map((o) => o.metadata.name)).toEqual(['a', 'b']);
    await second.create(CM, cm('c'));
    await second.close();
    const third = open(dir);
    expect((await contents(third)).map((o) => o.metadata.name)).toEqual(['a', 'b', 'c']);
    await third.close();
  });

  it('a log cut inside a record header is a torn tail too', async () => {
    const dir = tempDir();
    const first = open(dir);
    await first.create(CM, cm('a'));
    await first.close();
    appendFileSync(join(dir, LOG_FILE), Buffer.from([7, 0, 0]));
    const second = open(dir);
    expect((await contents(second)).map((o) => o.metadata.name)).toEqual(['a']);
    await second.close();
  });

  it('damage before the last record refuses to open with StoreCorruptError', async () => {
    const dir = tempDir();
    const first = open(dir);
    await first.create(CM, cm('a', { v: 'x'.repeat(50) }));
    await first.create(CM, cm('b'));
    await first.close();
    const log = join(dir, LOG_FILE);
    const bytes = readFileSync(log);
    bytes[LOG_MAGIC.length + 40] = (bytes[LOG_MAGIC.length + 40] as number) ^ 0xff;
    writeFileSync(log, bytes);
    expect(() => open(dir)).toThrow(StoreCorruptError);
  });

  it('a damaged snapshot refuses to open with StoreCorruptError', async () => {
    const dir = tempDir();
    const first = open(dir);
    await first.create(CM, cm('a'));
    first.snapshot();
    await first.close();
    writeFileSync(join(dir, 'snapshot'), 'not a snapshot');
    expect(() => open(dir)).toThrow(StoreCorruptError);
  });

  it("fsync 'batch' makes every write durable before its promise resolves", async () => {
    const dir = tempDir();
    const first = open(dir, { fsync: 'batch' });
    const writes = await Promise.all(['a', 'b', 'c'].map((name) => first.create(CM, cm(name))));
    await first.close();
    const second = open(dir);
    expect(await contents(second)).toEqual(writes);
    await second.close();
  });

  it('history is not persisted: after a restart an older resourceVersion expires instead of replaying wrong data', async () => {
    const dir = tempDir();
    const first = open(dir);
    await first.create(CM, cm('a'));
    await first.create(CM, cm('b'));
    await first.close();
    const second = open(dir);
    const watch = second.watch(CM, { resourceVersion: '2' })[Symbol.asyncIterator]();
    await expect(watch.next()).rejects.toBeInstanceOf(ExpiredError);
    await expect(
      second.list(CM, { resourceVersion: '2', resourceVersionMatch: 'Exact' }),
    ).rejects.toBeInstanceOf(ExpiredError);
    await second.close();
  });

  it('objects of a type not registered yet are kept and served once it is registered', async () => {
    const dir = tempDir();
    const first = open(dir);
    const gadget = {
      group: 'example.com',
      version: 'v1',
      kind: 'Gadget',
      plural: 'gadgets',
      namespaced: true,
    };
    first.registerType(gadget);
    const created = await first.create<KubeObject>(gadget, { metadata: { name: 'g', namespace: 'default' } });
    await first.close();
    const second = open(dir);
    second.registerType(gadget);
    expect(await contents(second, gadget)).toEqual([created]);
    await second.close();
  });

  it('a foreground deletion interrupted by a restart is finished after the types are registered again', async () => {
    const dir = tempDir();
    const first = open(dir);
    const owner = await first.create<Widget>(WIDGET, widget('owner'));
    await first.create(
      CM,
      cm(
        'dep',
        {},
        {
          ownerReferences: [ownerRef(owner, { blockOwnerDeletion: true })],
          finalizers: ['example.com/hold'],
        },
      ),
    );
    await first.delete(WIDGET, { namespace: 'default', name: 'owner' }, { propagationPolicy: 'Foreground' });
    await first.gcSettled();
    await first.close();
    const second = open(dir);
    await second.patch(
      CM,
      { namespace: 'default', name: 'dep' },
      { type: 'merge', patch: { metadata: { finalizers: null } } },
    );
    await second.gcSettled();
    expect(await contents(second, WIDGET)).toEqual([]);
    await second.close();
  });

  it('a closed store rejects operations', async () => {
    const dir = tempDir();
    const store = open(dir);
    await store.close();
    await expect(store.create(CM, cm('a'))).rejects.toThrow('the store is closed');
  });
});
