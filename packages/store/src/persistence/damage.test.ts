import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreCorruptError, StoreDataMissingError } from '../errors.ts';
import type { Store } from '../store.ts';
import type { StoreOptions } from '../store-options.ts';
import { CM, cm, makeStore } from '../testdata/fixtures.ts';
import { LOG_FILE, MANIFEST_FILE } from './data-dir.ts';
import { SNAPSHOT_FILE } from './snapshot.ts';
import { modeOf, recordingLogger, removeTempDirs, tempDir } from './test-helpers.ts';

afterEach(removeTempDirs);

function open(dataDir: string, options: StoreOptions = {}): Store {
  return makeStore({ dataDir, ...options }).store;
}

async function names(store: Store): Promise<string[]> {
  return (await store.list(CM)).items.map((o) => o.metadata.name as string);
}

function openError(dir: string, options: StoreOptions = {}): unknown {
  try {
    open(dir, options);
    return undefined;
  } catch (error) {
    return error;
  }
}

/** A data directory with a snapshot of `a`, `b` and a log holding `c` then `d`; returns the log size before `d`. */
async function populated(dir: string): Promise<number> {
  const store = open(dir);
  await store.create(CM, cm('a'));
  await store.create(CM, cm('b'));
  store.snapshot();
  await store.create(CM, cm('c'));
  const beforeLast = statSync(join(dir, LOG_FILE)).size;
  await store.create(CM, cm('d', { k: 'v'.repeat(40) }));
  await store.close();
  return beforeLast;
}

describe('damage policy', () => {
  it('a torn last record is truncated with a warning naming the dropped revision and key; every acknowledged write survives', async () => {
    const dir = tempDir();
    const beforeLast = await populated(dir);
    const log = join(dir, LOG_FILE);
    const bytes = readFileSync(log);
    writeFileSync(log, bytes.subarray(0, bytes.length - 10));
    const logger = recordingLogger();
    const store = open(dir, { logger });
    expect(await names(store)).toEqual(['a', 'b', 'c']);
    expect(statSync(log).size).toBe(beforeLast);
    const warning = logger.lines.find((l) => l.level === 'warn');
    expect(warning?.message).toContain('never acknowledged');
    expect(warning?.fields).toMatchObject({
      file: log,
      offset: beforeLast,
      droppedRevision: 5,
      droppedType: '/v1/configmaps',
      droppedKey: 'default/d',
    });
    await store.close();
  });

  it('a complete last record with a flipped byte stops the store with StoreCorruptError naming the file, offset and the recovery commands (it may have been acknowledged)', async () => {
    const dir = tempDir();
    const beforeLast = await populated(dir);
    const log = join(dir, LOG_FILE);
    const bytes = readFileSync(log);
    const at = bytes.length - 20;
    bytes[at] = (bytes[at] as number) ^ 0x04;
    writeFileSync(log, bytes);
    const error = openError(dir);
    expect(error).toBeInstanceOf(StoreCorruptError);
    expect(error).toMatchObject({ code: 'CONVERGE_ERR_STORE_CORRUPT', file: log, offset: beforeLast });
    expect((error as Error).message).toContain(`converge store check --data-dir ${dir}`);
    expect((error as Error).message).toContain(`converge store repair --data-dir ${dir}`);
    // Refusing changed nothing: the damaged record is still there for check and repair.
    expect(readFileSync(log)).toEqual(bytes);
  });

  it('a flipped byte in the snapshot stops the store with StoreCorruptError', async () => {
    const dir = tempDir();
    await populated(dir);
    const snapshot = join(dir, SNAPSHOT_FILE);
    const bytes = readFileSync(snapshot);
    bytes[40] = (bytes[40] as number) ^ 0x01;
    writeFileSync(snapshot, bytes);
    expect(openError(dir)).toBeInstanceOf(StoreCorruptError);
  });

  for (const [what, damage] of [
    ['a deleted log', (dir: string) => rmSync(join(dir, LOG_FILE))],
    ['an emptied log', (dir: string) => writeFileSync(join(dir, LOG_FILE), '')],
    ['a deleted snapshot', (dir: string) => rmSync(join(dir, SNAPSHOT_FILE))],
    ['an emptied snapshot', (dir: string) => writeFileSync(join(dir, SNAPSHOT_FILE), '')],
    [
      'a deleted log and snapshot',
      (dir: string) => {
        rmSync(join(dir, LOG_FILE));
        rmSync(join(dir, SNAPSHOT_FILE));
      },
    ],
  ] as const) {
    it(`${what} is refused with StoreDataMissingError, never silently started empty`, async () => {
      const dir = tempDir();
      await populated(dir);
      damage(dir);
      const error = openError(dir);
      expect(error).toBeInstanceOf(StoreDataMissingError);
      expect(error).toMatchObject({ code: 'CONVERGE_ERR_STORE_DATA_MISSING' });
      expect((error as Error).message).toContain('converge store repair');
    });
  }

  it('allowReinitialize starts empty over lost data on purpose, with a warning, and keeps the leftovers aside', async () => {
    const dir = tempDir();
    await populated(dir);
    rmSync(join(dir, SNAPSHOT_FILE));
    const logger = recordingLogger();
    const store = open(dir, { logger, persistence: { allowReinitialize: true } });
    expect(await names(store)).toEqual([]);
    expect(logger.lines.some((l) => l.level === 'warn' && l.message.includes('starting empty'))).toBe(true);
    const aside = readdirSync(dir).find((name) => name.startsWith('reinitialized-'));
    expect(aside).toBeDefined();
    expect(existsSync(join(dir, aside as string, LOG_FILE))).toBe(true);
    await store.close();
  });
});

describe('private files', () => {
  it('a new data directory is 0700 and every file in it 0600', async () => {
    const dir = tempDir();
    await populated(dir);
    expect(modeOf(dir)).toBe(0o700);
    for (const name of [LOG_FILE, SNAPSHOT_FILE, MANIFEST_FILE]) expect(modeOf(join(dir, name))).toBe(0o600);
  });

  it('a looser data directory and files are tightened at start, with a warning', async () => {
    const dir = tempDir();
    await populated(dir);
    chmodSync(dir, 0o755);
    chmodSync(join(dir, LOG_FILE), 0o644);
    chmodSync(join(dir, SNAPSHOT_FILE), 0o666);
    const logger = recordingLogger();
    const store = open(dir, { logger });
    expect(modeOf(dir)).toBe(0o700);
    expect(modeOf(join(dir, LOG_FILE))).toBe(0o600);
    expect(modeOf(join(dir, SNAPSHOT_FILE))).toBe(0o600);
    expect(logger.lines.filter((l) => l.level === 'warn' && l.message.includes('tightened'))).toHaveLength(3);
    // Files written later (a new snapshot, a new log) are private too.
    store.snapshot();
    expect(modeOf(join(dir, LOG_FILE))).toBe(0o600);
    expect(modeOf(join(dir, SNAPSHOT_FILE))).toBe(0o600);
    await store.close();
  });
});
