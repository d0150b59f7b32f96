import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Fence, FencedError } from '@converge/runtime';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreCorruptError, StorePersistError } from '../errors.ts';
import { CM, type ConfigMap, cm, makeStore } from '../testdata/fixtures.ts';
import { decodeFences, encodeFences, FENCES_FILE, FENCES_MAGIC } from './fences-file.ts';
import { checkDataDir, repairDataDir } from './inspect.ts';
import { frame } from './record-codec.ts';
import { faultyFs, removeTempDirs, tempDir } from './test-helpers.ts';

afterEach(removeTempDirs);

const fence = (epoch: number, holder = 'b', name = 'default/op'): Fence => ({ name, holder, epoch });
const fenced = (f: Fence) => ({ fence: f });

describe('fence marks survive a restart of a store with a data directory', () => {
  it('an announced mark is kept: after a restart a stale write and a stale announcement are refused, the holder writes on', async () => {
    const dir = tempDir();
    const first = makeStore({ dataDir: dir }).store;
    await first.announceFence(fence(1, 'a'));
    await first.create<ConfigMap>(CM, cm('by-a'), fenced(fence(1, 'a')));
    await first.announceFence(fence(2, 'b'));
    await first.close();

    const { store } = makeStore({ dataDir: dir });
    expect(store.fenceMarks()).toEqual([fence(2, 'b')]);
    await expect(store.create<ConfigMap>(CM, cm('late'), fenced(fence(1, 'a')))).rejects.toBeInstanceOf(
      FencedError,
    );
    await expect(
      store.delete(CM, { namespace: 'default', name: 'by-a' }, fenced(fence(1, 'a'))),
    ).rejects.toBeInstanceOf(FencedError);
    // the same epoch from another holder is as stale as a lower one
    await expect(store.announceFence(fence(2, 'a'))).rejects.toBeInstanceOf(FencedError);
    expect(await store.get<ConfigMap>(CM, { namespace: 'default', name: 'by-a' })).toBeDefined();
    await expect(store.get(CM, { namespace: 'default', name: 'late' })).rejects.toThrow();
    await store.create<ConfigMap>(CM, cm('by-b'), fenced(fence(2, 'b')));
    await store.close();
  });

  it('a mark raised by a write (no announcement) is kept before the write is acknowledged; a dry run raises nothing', async () => {
    const dir = tempDir();
    const first = makeStore({ dataDir: dir }).store;
    await first.create<ConfigMap>(CM, cm('dry'), { ...fenced(fence(9, 'z', 'dry')), dryRun: true });
    await first.create<ConfigMap>(CM, cm('x'), fenced(fence(5, 'a')));
    await first.create<ConfigMap>(CM, cm('y'), fenced(fence(3, 'c', 'other')));
    // a write at the mark's own epoch and holder changes nothing on disk
    const before = readFileSync(join(dir, FENCES_FILE));
    await first.create<ConfigMap>(CM, cm('z'), fenced(fence(5, 'a')));
    expect(readFileSync(join(dir, FENCES_FILE))).toEqual(before);
    await first.close();

    const { store } = makeStore({ dataDir: dir });
    const byName = (a: Fence, b: Fence) => a.name.localeCompare(b.name);
    expect(store.fenceMarks().sort(byName)).toEqual([fence(5, 'a'), fence(3, 'c', 'other')]);
    await expect(store.create<ConfigMap>(CM, cm('w'), fenced(fence(4, 'a')))).rejects.toBeInstanceOf(
      FencedError,
    );
    await store.close();
  });

  it('marks outlive a reinitialized log (allowReinitialize starts the objects empty, not the fences)', async () => {
    const dir = tempDir();
    const first = makeStore({ dataDir: dir }).store;
    await first.announceFence(fence(4));
    await first.close();
    rmSync(join(dir, 'log'));
    const { store } = makeStore({ dataDir: dir, persistence: { allowReinitialize: true } });
    expect(store.fenceMarks()).toEqual([fence(4)]);
    await expect(store.announceFence(fence(3))).rejects.toBeInstanceOf(FencedError);
    await store.close();
  });

  it('a failure to keep a raised mark fails the announcement or the write, raises nothing and leaves the old marks on disk', async () => {
    const dir = tempDir();
    const faults = faultyFs('ENOSPC');
    const first = makeStore({ dataDir: dir, persistence: { fileSystem: faults.fs } }).store;
    await first.announceFence(fence(1, 'a'));
    faults.failing.set('renameSync', (args) => String(args[0]).endsWith(`${FENCES_FILE}.tmp`));

    await expect(first.announceFence(fence(2))).rejects.toBeInstanceOf(StorePersistError);
    const write = first.create<ConfigMap>(CM, cm('under-2'), fenced(fence(2)));
    await expect(write).rejects.toBeInstanceOf(StorePersistError);
    expect(first.fenceMarks()).toEqual([fence(1, 'a')]);
    await expect(first.get(CM, { namespace: 'default', name: 'under-2' })).rejects.toThrow();
    expect(first.health().persistence?.lastError?.step).toBe('fences');
    expect(existsSync(join(dir, `${FENCES_FILE}.tmp`))).toBe(false);
    // the old holder still writes; once the disk recovers the raise goes through
    await first.create<ConfigMap>(CM, cm('by-a'), fenced(fence(1, 'a')));
    faults.failing.clear();
    await first.announceFence(fence(2));
    await first.close();

    const { store } = makeStore({ dataDir: dir });
    expect(store.fenceMarks()).toEqual([fence(2)]);
    await store.close();
  });
});

describe('a damaged fences file', () => {
  it('stops the store from opening with a typed error naming the file, and releases the directory', async () => {
    const dir = tempDir();
    const first = makeStore({ dataDir: dir }).store;
    await first.announceFence(fence(7));
    await first.close();
    const file = join(dir, FENCES_FILE);
    const good = readFileSync(file);
    const bad = Buffer.from(good);
    bad[bad.length - 3] = (bad[bad.length - 3] as number) ^ 0xff;
    writeFileSync(file, bad);

    const error = (() => {
      try {
        makeStore({ dataDir: dir });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(StoreCorruptError);
    expect((error as StoreCorruptError).file).toBe(file);
    // the lock was let go: with the file restored the store opens, marks intact
    writeFileSync(file, good);
    const { store } = makeStore({ dataDir: dir });
    expect(store.fenceMarks()).toEqual([fence(7)]);
    await store.close();
  });

  it('converge store check reports the marks and the damage; repair moves the damaged file aside and says the marks are lost', async () => {
    const dir = tempDir();
    const first = makeStore({ dataDir: dir }).store;
    await first.create<ConfigMap>(CM, cm('kept'));
    await first.announceFence(fence(3));
    await first.close();

    const healthy = checkDataDir(dir);
    expect(healthy.healthy).toBe(true);
    expect(healthy.fences).toEqual([fence(3)]);
    const untouched = repairDataDir(dir);
    expect(untouched).toMatchObject({ repaired: false, fencesLost: false });

    writeFileSync(join(dir, FENCES_FILE), 'CVGFNC1\nnot a record');
    const report = checkDataDir(dir);
    expect(report.healthy).toBe(false);
    expect(report.fences).toEqual([]);
    expect(report.damage.map((d) => d.file)).toEqual([join(dir, FENCES_FILE)]);

    const repaired = repairDataDir(dir);
    expect(repaired).toMatchObject({ repaired: true, fencesLost: true, liveObjects: 1 });
    expect(existsSync(join(repaired.backupDir as string, FENCES_FILE))).toBe(true);
    const { store } = makeStore({ dataDir: dir });
    expect(store.fenceMarks()).toEqual([]);
    expect(await store.get(CM, { namespace: 'default', name: 'kept' })).toBeDefined();
    await store.close();
  });

  it('repair of other damage keeps readable marks in place', async () => {
    const dir = tempDir();
    const first = makeStore({ dataDir: dir }).store;
    await first.create<ConfigMap>(CM, cm('a'));
    await first.announceFence(fence(6));
    await first.close();
    const log = join(dir, 'log');
    const bytes = readFileSync(log);
    bytes[bytes.length - 2] = (bytes[bytes.length - 2] as number) ^ 0x5a;
    writeFileSync(log, Buffer.concat([bytes, Buffer.from('x'.repeat(64))]));
    const repaired = repairDataDir(dir);
    expect(repaired).toMatchObject({ repaired: true, fencesLost: false });
    const { store } = makeStore({ dataDir: dir });
    expect(store.fenceMarks()).toEqual([fence(6)]);
    await store.close();
  });

  it('decoding any bytes gives the marks written or a StoreCorruptError, never another error (fuzzed)', () => {
    const fenceArb = fc.record({
      name: fc.string({ minLength: 1, maxLength: 20 }),
      holder: fc.string({ minLength: 1, maxLength: 20 }),
      epoch: fc.nat(),
    });
    const marksArb = fc.uniqueArray(fenceArb, { selector: (f) => f.name, maxLength: 5 });
    fc.assert(
      fc.property(marksArb, (marks) => {
        expect(decodeFences(encodeFences(marks), 'f')).toEqual(marks);
      }),
    );
    fc.assert(
      fc.property(
        marksArb,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 4 }),
        (marks, flips) => {
          const bytes = Buffer.from(encodeFences(marks));
          for (const [at, mask] of flips) {
            const i = at % bytes.length;
            bytes[i] = (bytes[i] as number) ^ mask;
          }
          try {
            const decoded = decodeFences(bytes, 'f');
            // a flip that still decodes (none should, with two checksums) must give valid fences
            for (const f of decoded) expect(f.epoch).toBeGreaterThanOrEqual(0);
          } catch (error) {
            expect(error).toBeInstanceOf(StoreCorruptError);
          }
        },
      ),
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (raw) => {
        expect(() => decodeFences(Buffer.from(raw), 'f')).toThrow(StoreCorruptError);
      }),
    );
  });

  it('valid framing around a record that is not a list of fences is damage too', () => {
    const framed = (body: string): Buffer => Buffer.concat([FENCES_MAGIC, frame(Buffer.from(body, 'utf8'))]);
    for (const body of [
      'nope',
      '{}',
      '{"marks":{}}',
      '{"marks":[{"name":"","holder":"a","epoch":1}]}',
      '{"marks":[{"name":"n","holder":"a","epoch":-1}]}',
      '{"marks":[{"name":"n","holder":"a","epoch":1},{"name":"n","holder":"b","epoch":2}]}',
    ]) {
      expect(() => decodeFences(framed(body), 'f'), body).toThrow(StoreCorruptError);
    }
  });
});
