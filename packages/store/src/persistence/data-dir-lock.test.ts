/**
 * The data directory's writer lock: one Store per directory, in this process or any other; a dead
 * process's lock taken over, exactly once when several race for it; another host's lock, or one that
 * cannot be read, never.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { isConvergeError } from '@converge/runtime';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreLockedError } from '../errors.ts';
import { Store } from '../store.ts';
import { CM, type ConfigMap, cm } from '../testdata/fixtures.ts';
import { LOCK_FILE, takeoverMutex } from './data-dir-lock.ts';
import { nodeFileSystem, type StoreFileSystem } from './file-system.ts';
import { checkDataDir, repairDataDir } from './inspect.ts';
import { errno, recordingLogger, removeTempDirs, tempDir } from './test-helpers.ts';

const stores: Store[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  for (const store of stores.splice(0)) await store.close();
  removeTempDirs();
});

/** A Store on `dataDir`, closed after the test; `fileSystem` overrides calls of `node:fs` (undefined: removes one). */
function open(
  dataDir: string,
  fileSystem?: { readonly [K in keyof StoreFileSystem]?: StoreFileSystem[K] | undefined },
): Store {
  const store = new Store({
    dataDir,
    types: [CM],
    ...(fileSystem === undefined
      ? {}
      : { persistence: { fileSystem: { ...nodeFileSystem, ...fileSystem } as StoreFileSystem } }),
  });
  stores.push(store);
  return store;
}

/** What `fn` threw (it must throw). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

/** The pid of a process that ran on this host and is gone (reaped): `node -e 0`, awaited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  const pid = child.pid as number;
  await new Promise((resolve) => child.once('exit', resolve));
  return pid;
}

/** Whether a process with `pid` runs on this host. */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

let ids = 0;
/** A lock record as Converge writes one. */
function record(fields: { pid: number; hostname?: string; startedAt?: string }): string {
  const id = (++ids).toString(16).padStart(32, '0');
  return `${JSON.stringify({ hostname: hostname(), startedAt: '2020-01-01T00:00:00.000Z', ...fields, id })}\n`;
}

/** A data directory (created) whose LOCK holds `content`; returns the directory. */
function lockedDir(content: string | Uint8Array): string {
  const dir = tempDir();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, LOCK_FILE), content);
  return dir;
}

const lockOf = (dir: string): string => readFileSync(join(dir, LOCK_FILE), 'utf8');
const lockFiles = (dir: string): string[] => readdirSync(dir).filter((name) => name.startsWith('LOCK'));

describe('the data directory lock', () => {
  it('a second Store on an open data directory in this process is refused at once with StoreLockedError naming the directory and this pid', () => {
    const dir = tempDir();
    open(dir);
    const lock = JSON.parse(lockOf(dir));
    expect(lock).toMatchObject({ pid: process.pid, hostname: hostname() });
    expect(Date.parse(lock.startedAt)).toBeLessThanOrEqual(Date.now());
    const error = thrown(() => new Store({ dataDir: dir, types: [CM] }));
    expect(error).toBeInstanceOf(StoreLockedError);
    expect(error).toMatchObject({
      code: 'CONVERGE_ERR_STORE_LOCKED',
      dataDir: dir,
      reason: 'held',
      holder: { pid: process.pid, hostname: hostname() },
    });
    expect((error as Error).message).toContain(dir);
    expect((error as Error).message).toContain(`pid ${process.pid}`);
    expect((error as Error).message).toContain('already open in this process');
  });

  it('closing the Store releases the lock: LOCK is gone and the directory reopens with its objects', async () => {
    const dir = tempDir();
    const first = open(dir);
    await first.create<ConfigMap>(CM, cm('kept'));
    await first.close();
    expect(lockFiles(dir)).toEqual([]);
    const second = open(dir);
    expect((await second.get<ConfigMap>(CM, { namespace: 'default', name: 'kept' })).metadata.name).toBe(
      'kept',
    );
    expect(JSON.parse(lockOf(dir)).pid).toBe(process.pid);
  });

  it('a Store that fails to open (a corrupt manifest) leaves no lock behind', () => {
    const dir = tempDir();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'manifest.json'), 'not ours');
    expect(isConvergeError(thrown(() => open(dir)))).toBe(true);
    expect(lockFiles(dir)).toEqual([]);
  });

  it('a lock left by a dead process on this host is taken over, with a warning naming that process', async () => {
    const pid = await deadPid();
    const dir = lockedDir(record({ pid }));
    const logger = recordingLogger();
    const store = new Store({ dataDir: dir, types: [CM], logger });
    stores.push(store);
    expect(JSON.parse(lockOf(dir))).toMatchObject({ pid: process.pid, hostname: hostname() });
    expect(logger.lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: 'took over the store data directory lock of a process that is gone',
        fields: expect.objectContaining({ dataDir: dir, pid }),
      }),
    );
    expect(lockFiles(dir)).toEqual([LOCK_FILE]);
  });

  it("a lock naming this pid with an earlier start (a restarted container's pid 1) is taken over; with this process's start it is this process's", () => {
    const earlier = lockedDir(record({ pid: process.pid, startedAt: '2001-01-01T00:00:00.000Z' }));
    open(earlier);
    expect(JSON.parse(lockOf(earlier)).startedAt).not.toBe('2001-01-01T00:00:00.000Z');

    const started = new Date(Date.now() - process.uptime() * 1000).toISOString();
    const same = lockedDir(record({ pid: process.pid, startedAt: started }));
    expect(thrown(() => open(same))).toMatchObject({ reason: 'held', holder: { pid: process.pid } });
  });

  it.runIf(existsSync('/proc/sys/kernel/random/boot_id'))(
    'a lock written in an earlier boot of this machine is taken over, even when its pid now runs',
    () => {
      const earlier = JSON.parse(record({ pid: process.ppid }));
      const dir = lockedDir(JSON.stringify({ ...earlier, bootId: '00000000-0000-4000-8000-000000000000' }));
      open(dir);
      expect(JSON.parse(lockOf(dir))).toMatchObject({
        pid: process.pid,
        bootId: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
      });
    },
  );

  it('a lock held by a live process on this host is refused, naming its pid and how to fix it', () => {
    const content = record({ pid: process.ppid });
    const dir = lockedDir(content);
    const error = thrown(() => open(dir)) as StoreLockedError;
    expect(error).toBeInstanceOf(StoreLockedError);
    expect(error.reason).toBe('held');
    expect(error.message).toContain(`process ${process.ppid} on host ${hostname()}`);
    expect(error.message).toContain(dir);
    expect(error.message).toMatch(/Stop that process.*--data-dir/);
    expect(lockOf(dir)).toBe(content);
  });

  it('a lock naming another host is never taken over, even with a pid that is dead here; the message says why and what to delete', async () => {
    const content = record({ pid: await deadPid(), hostname: 'elsewhere.example' });
    const dir = lockedDir(content);
    const error = thrown(() => open(dir)) as StoreLockedError;
    expect(error).toBeInstanceOf(StoreLockedError);
    expect(error).toMatchObject({ reason: 'other-host', holder: { hostname: 'elsewhere.example' } });
    expect(error.message).toContain('on host elsewhere.example');
    expect(error.message).toContain('never taken over automatically');
    expect(error.message).toContain(`delete ${join(dir, LOCK_FILE)}`);
    expect(lockOf(dir)).toBe(content);
    expect(lockFiles(dir)).toEqual([LOCK_FILE]);
  });

  it('garbage in the lock file is refused with a typed error, never taken over; deleted as the message says, the directory opens', () => {
    const dir = lockedDir('{"pid": "four"');
    const error = thrown(() => open(dir)) as StoreLockedError;
    expect(error).toBeInstanceOf(StoreLockedError);
    expect(error).toMatchObject({ reason: 'unreadable', holder: undefined });
    expect(error.message).toContain('it is not JSON');
    expect(error.message).toContain(`delete ${join(dir, LOCK_FILE)}`);
    expect(lockOf(dir)).toBe('{"pid": "four"');
    expect(thrown(() => open(lockedDir('')))).toMatchObject({ reason: 'unreadable' });
    expect(thrown(() => open(lockedDir(record({ pid: 0 }))))).toMatchObject({ reason: 'unreadable' });
  });

  it('whatever bytes the lock file holds, opening gives a store (only for a dead process of this host) or a StoreLockedError that leaves the file as it was, never another error', async () => {
    const dead = await deadPid();
    const pid = fc.oneof(
      fc.constantFrom(dead, process.pid, process.ppid, 0, -1, 1, 2 ** 31, Number.NaN, 1.5),
      fc.integer(),
      fc.string(),
      fc.constant(null),
    );
    const host = fc.oneof(fc.constant(hostname()), fc.string(), fc.integer(), fc.constant(undefined));
    const startedAt = fc.oneof(
      fc.constant('2020-01-01T00:00:00.000Z'),
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      fc.string(),
    );
    const id = fc.oneof(fc.constant('ab'.repeat(16)), fc.string(), fc.nat());
    const valid = {
      pid: dead,
      hostname: hostname(),
      startedAt: '2020-01-01T00:00:00.000Z',
      id: 'ab'.repeat(16),
    };
    const oneFieldOff = fc
      .tuple(fc.constantFrom('pid', 'hostname', 'startedAt', 'id', 'bootId', 'extra', 'none'), fc.jsonValue())
      .map(([field, value]) => (field === 'none' ? valid : { ...valid, [field]: value }))
      .map((r) => Buffer.from(JSON.stringify(r)));
    const lock = fc.oneof(
      { arbitrary: oneFieldOff, weight: 3 },
      fc.uint8Array({ maxLength: 200 }),
      fc.string().map((s) => Buffer.from(s)),
      fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v) ?? '')),
      fc
        .record({ pid, hostname: host, startedAt, id }, { requiredKeys: [] })
        .map((r) => Buffer.from(JSON.stringify(r))),
      fc.constant(Buffer.alloc(5000, 0x20)),
    );
    let opened = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(lock, async (bytes) => {
        const dir = lockedDir(bytes);
        let store: Store | undefined;
        try {
          store = new Store({ dataDir: dir, types: [CM] });
        } catch (error) {
          expect(error, String(error)).toBeInstanceOf(StoreLockedError);
          expect((error as Error).message).toContain(dir);
          expect(readFileSync(join(dir, LOCK_FILE)).equals(bytes)).toBe(true);
          refused++;
          return;
        }
        const found = JSON.parse(bytes.toString('utf8'));
        expect(found.hostname).toBe(hostname());
        // Only a process that is gone (or of an earlier boot), or an earlier process with this pid, loses its lock.
        const gone = found.pid === process.pid || !running(found.pid) || typeof found.bootId === 'string';
        expect(gone, JSON.stringify(found)).toBe(true);
        await store.close();
        expect(lockFiles(dir)).toEqual([]);
        opened++;
      }),
      { numRuns: 200 },
    );
    expect(refused).toBeGreaterThan(0);
    expect(opened).toBeGreaterThan(0);
  });
});

describe('taking over a stale lock', () => {
  it('a takeover that finds LOCK changed under its mutex (another process took over first) backs off and names the winner; the winner keeps its lock', async () => {
    const stale = record({ pid: await deadPid() });
    const dir = lockedDir(stale);
    const winner = record({ pid: process.ppid });
    const fileSystem: StoreFileSystem = {
      ...nodeFileSystem,
      // The other process's whole takeover lands between this one's read of LOCK and its mutex.
      linkSync: (from, to) => {
        if (to.includes('.takeover-')) writeFileSync(join(dir, LOCK_FILE), winner);
        nodeFileSystem.linkSync?.(from, to);
      },
    };
    const error = thrown(() => open(dir, fileSystem)) as StoreLockedError;
    expect(error).toBeInstanceOf(StoreLockedError);
    expect(error).toMatchObject({ reason: 'held', holder: { pid: process.ppid } });
    expect(lockOf(dir)).toBe(winner);
    expect(lockFiles(dir)).toEqual([LOCK_FILE]);
  });

  it('while another live process holds the takeover mutex, the open is refused naming it, and LOCK is left alone', async () => {
    const stale = record({ pid: await deadPid() });
    const dir = lockedDir(stale);
    writeFileSync(join(dir, takeoverMutex(Buffer.from(stale))), record({ pid: process.ppid }));
    const error = thrown(() => open(dir)) as StoreLockedError;
    expect(error).toMatchObject({ reason: 'taking-over', holder: { pid: process.ppid } });
    expect(error.message).toContain(`process ${process.ppid}`);
    expect(lockOf(dir)).toBe(stale);
  });

  it('a takeover mutex left by a process that died mid-takeover is itself taken over, and nothing is left behind', async () => {
    const stale = record({ pid: await deadPid() });
    const dir = lockedDir(stale);
    writeFileSync(join(dir, takeoverMutex(Buffer.from(stale))), record({ pid: await deadPid() }));
    open(dir);
    expect(JSON.parse(lockOf(dir)).pid).toBe(process.pid);
    expect(lockFiles(dir)).toEqual([LOCK_FILE]);
  });

  it('on a file system without hard links the lock is created in place, still exclusive, and released', async () => {
    for (const linkSync of [
      undefined,
      () => {
        throw errno('EPERM');
      },
    ]) {
      const dir = tempDir();
      const first = open(dir, { linkSync });
      expect(thrown(() => open(dir, { linkSync }))).toMatchObject({ reason: 'held' });
      await first.close();
      expect(lockFiles(dir)).toEqual([]);
      open(dir, { linkSync });
      expect(JSON.parse(lockOf(dir)).pid).toBe(process.pid);
    }
  });

  it('processes opening one directory with a stale lock at the same moment: exactly one gets it, the others get StoreLockedError', async () => {
    const script = fileURLToPath(new URL('../testdata/lock-child.ts', import.meta.url));
    const procs = Array.from({ length: 3 }, () => {
      const child = spawn(process.execPath, ['--conditions=@converge/source', script], {
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      children.push(child);
      const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })[Symbol.asyncIterator]();
      const next = async (): Promise<string> => (await lines.next()).value as string;
      return { child, next };
    });
    for (const p of procs) expect(await p.next()).toBe('ready');
    for (let round = 0; round < 4; round++) {
      const dir = lockedDir(record({ pid: await deadPid() }));
      for (const p of procs) p.child.stdin?.write(`open ${dir}\n`);
      const results = await Promise.all(procs.map((p) => p.next()));
      expect(
        results.filter((r) => r === 'opened'),
        results.join('; '),
      ).toHaveLength(1);
      for (const r of results.filter((r) => r !== 'opened'))
        expect(r).toMatch(/^locked CONVERGE_ERR_STORE_LOCKED (held|taking-over|contended)$/);
      const winner = procs[results.indexOf('opened')];
      expect(JSON.parse(lockOf(dir)).pid).toBe(winner?.child.pid);
      winner?.child.stdin?.write('close\n');
      expect(await winner?.next()).toBe('closed');
      expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    }
  });
});

describe('converge store check and repair and the lock', () => {
  it('check reads a directory a Store has open and says who holds it; repair refuses it; both work once it is closed', async () => {
    const dir = tempDir();
    const store = open(dir);
    await store.create<ConfigMap>(CM, cm('a'));
    const report = checkDataDir(dir);
    expect(report.healthy).toBe(true);
    expect(report.lock).toMatchObject({ state: 'held', self: true, holder: { pid: process.pid } });
    expect(thrown(() => repairDataDir(dir))).toMatchObject({ code: 'CONVERGE_ERR_STORE_LOCKED' });
    await store.close();
    expect(checkDataDir(dir).lock).toEqual({ state: 'free' });
    expect(repairDataDir(dir)).toMatchObject({ repaired: false, tookOverLockOf: undefined });
    expect(lockFiles(dir)).toEqual([]);
  });

  it('repair takes over a dead process’s lock and says whose it was', async () => {
    const dir = tempDir();
    const store = open(dir);
    await store.close();
    const pid = await deadPid();
    writeFileSync(join(dir, LOCK_FILE), record({ pid }));
    expect(checkDataDir(dir).lock).toMatchObject({ state: 'stale', holder: { pid } });
    expect(repairDataDir(dir).tookOverLockOf).toMatchObject({ pid, hostname: hostname() });
    expect(lockFiles(dir)).toEqual([]);
  });
});
