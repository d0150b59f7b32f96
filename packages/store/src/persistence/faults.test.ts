import { InternalError, type WatchEvent } from '@converge/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { StorePersistError } from '../errors.ts';
import type { StoreOptions } from '../store-options.ts';
import { CM, type ConfigMap, cm, makeStore } from '../testdata/fixtures.ts';
import { faultyFs, recordingLogger, removeTempDirs, tempDir } from './test-helpers.ts';

afterEach(removeTempDirs);

/** Opens a watch from the store's current revision and collects its events. */
function collect(store: ReturnType<typeof makeStore>['store']): { events: WatchEvent[]; stop: () => void } {
  const events: WatchEvent[] = [];
  const iterator = store.watch(CM, { resourceVersion: String(store.revision) })[Symbol.asyncIterator]();
  let stopped = false;
  void (async () => {
    for (;;) {
      const next = await iterator.next().catch(() => ({ done: true as const, value: undefined }));
      if (next.done === true || stopped) return;
      events.push(next.value);
    }
  })();
  return {
    events,
    stop: () => {
      stopped = true;
      void iterator.return?.();
    },
  };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('no false error from background persistence steps', () => {
  it('a snapshot that fails (ENOSPC on rename) never fails a committed write: every write resolves, watchers see every event, and the failure is counted, logged and retried with backoff', async () => {
    const dir = tempDir();
    const faults = faultyFs('ENOSPC');
    const logger = recordingLogger();
    const options: StoreOptions = {
      dataDir: dir,
      logger,
      snapshotEveryRecords: 3,
      persistence: { fileSystem: faults.fs, retryInitialMs: 1_000 },
    };
    const { store, clock } = makeStore(options);
    const watch = collect(store);
    faults.failing.set('renameSync', () => true);
    const written: string[] = [];
    for (let i = 0; i < 20; i++) {
      const created = await store.create<ConfigMap>(CM, cm(`cm-${i}`));
      written.push(created.metadata.resourceVersion as string);
    }
    await tick();
    expect(watch.events.map((e) => ('object' in e ? e.object.metadata.resourceVersion : e.type))).toEqual(
      written,
    );
    const failed = store.health();
    expect(failed.ok).toBe(false);
    expect(failed.persistence).toMatchObject({
      writable: true,
      healthy: false,
      snapshots: 0,
      snapshotFailures: 1,
      consecutiveSnapshotFailures: 1,
      lastError: { step: 'snapshot', code: 'ENOSPC' },
    });
    expect(logger.lines.filter((l) => l.level === 'error')).toHaveLength(1);
    // Within the backoff no new attempt; past it, one more (still failing) with a doubled wait.
    await clock.advance(1_000);
    await store.create(CM, cm('after-backoff'));
    expect(store.health().persistence?.snapshotFailures).toBe(2);
    expect(store.health().persistence?.nextSnapshotAttemptAt).toBe(clock.now() + 2_000);
    // Once the disk has room again, the next attempt after the backoff succeeds.
    faults.failing.clear();
    await clock.advance(2_000);
    await store.create(CM, cm('recovered'));
    expect(store.health()).toMatchObject({
      ok: true,
      persistence: { snapshots: 1, recordsSinceSnapshot: 0 },
    });
    watch.stop();
    await store.close();
    const reopened = makeStore({ dataDir: dir }).store;
    expect((await reopened.list(CM)).items).toHaveLength(22);
    await reopened.close();
  });

  it('a snapshot whose fsync of the new log fails keeps the old log and loses no acknowledged write', async () => {
    const dir = tempDir();
    const faults = faultyFs('EIO');
    const { store } = makeStore({
      dataDir: dir,
      snapshotEveryRecords: 5,
      persistence: { fileSystem: faults.fs },
    });
    let acknowledged = 0;
    for (let i = 0; i < 4; i++) {
      await store.create(CM, cm(`cm-${i}`));
      acknowledged++;
    }
    // The fifth write triggers a snapshot: its file is renamed into place, then the fsync of the
    // new log (log.tmp) fails.
    faults.failing.set('fdatasyncSync', () => faults.lastOpened().endsWith('log.tmp'));
    await store.create(CM, cm('cm-4')).then(() => acknowledged++);
    expect(acknowledged).toBe(5);
    expect(store.health().persistence?.lastError?.step).toBe('snapshot');
    await store.close();
    const reopened = makeStore({ dataDir: dir }).store;
    expect((await reopened.list(CM)).items).toHaveLength(5);
    await reopened.close();
  });

  it('a failed append is a failed write that was never committed: rejected, not stored, not published, revision unchanged', async () => {
    const dir = tempDir();
    const faults = faultyFs('ENOSPC');
    const { store } = makeStore({ dataDir: dir, persistence: { fileSystem: faults.fs } });
    await store.create(CM, cm('before'));
    const revision = store.revision;
    const watch = collect(store);
    faults.failing.set('writeSync', () => true);
    const error = await store.create(CM, cm('lost')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalError);
    expect((error as InternalError).cause).toBeInstanceOf(StorePersistError);
    expect(store.revision).toBe(revision);
    await expect(store.get(CM, { namespace: 'default', name: 'lost' })).rejects.toThrow();
    faults.failing.clear();
    // The log was cut back: later writes succeed and follow on without a gap.
    const after = await store.create<ConfigMap>(CM, cm('after'));
    expect(after.metadata.resourceVersion).toBe(String(revision + 1));
    await tick();
    expect(watch.events.map((e) => ('object' in e ? e.object.metadata.name : e.type))).toEqual(['after']);
    watch.stop();
    await store.close();
    const reopened = makeStore({ dataDir: dir }).store;
    expect((await reopened.list(CM)).items.map((o) => o.metadata.name)).toEqual(['after', 'before']);
    await reopened.close();
  });

  it('a failed fsync rejects the write before commit and makes the store refuse later writes (never a write of unknown durability reported as done)', async () => {
    const dir = tempDir();
    const faults = faultyFs('EIO');
    const { store } = makeStore({ dataDir: dir, persistence: { fileSystem: faults.fs } });
    await store.create(CM, cm('before'));
    faults.failing.set('fdatasyncSync', () => true);
    await expect(store.create(CM, cm('unsynced'))).rejects.toBeInstanceOf(InternalError);
    faults.failing.clear();
    await expect(store.create(CM, cm('later'))).rejects.toBeInstanceOf(InternalError);
    expect(store.health()).toMatchObject({
      ok: false,
      persistence: { writable: false, lastError: { step: 'fsync', code: 'EIO' } },
    });
    await store.close();
    const reopened = makeStore({ dataDir: dir }).store;
    expect((await reopened.list(CM)).items.map((o) => o.metadata.name)).toEqual(['before']);
    await reopened.close();
  });
});
