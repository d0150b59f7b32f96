/**
 * The store on a real small disk: a 2 MiB tmpfs that fills up, and one remounted read-only. The
 * same rows run with injected faults in faults.test.ts; here the kernel says ENOSPC and EROFS.
 * Mounting a tmpfs needs root (CAP_SYS_ADMIN), as on CI's machines; elsewhere these tests are
 * skipped with that reason and faults.test.ts still covers the rows.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../store.ts';
import { CM, type ConfigMap, cm } from '../testdata/fixtures.ts';

function tryMount(dir: string, size: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const probe = mkdtempSync(join(tmpdir(), 'converge-tmpfs-probe-'));
const canMount = tryMount(probe, '64k');
if (canMount) execFileSync('umount', [probe]);
rmSync(probe, { recursive: true, force: true });

const mounts: string[] = [];
afterEach(() => {
  for (const dir of mounts.splice(0)) {
    execFileSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A fresh 2 MiB tmpfs. */
function smallDisk(): string {
  const dir = mkdtempSync(join(tmpdir(), 'converge-tmpfs-'));
  if (!tryMount(dir, '2m')) throw new Error(`cannot mount a tmpfs on ${dir}`);
  mounts.push(dir);
  return dir;
}

const value = 'v'.repeat(1_000);

async function names(dataDir: string): Promise<string[]> {
  const store = new Store({ dataDir, types: [CM] });
  try {
    return (await store.list<ConfigMap>(CM)).items.map((o) => o.metadata.name as string).sort();
  } finally {
    await store.close();
  }
}

describe.skipIf(!canMount)(
  'on a real disk that fills up or turns read-only (needs root to mount a tmpfs)',
  () => {
    it('a full disk (ENOSPC): writes fail with a typed error before commit, every acknowledged write survives a restart, none that failed appears', async () => {
      const disk = smallDisk();
      const dataDir = join(disk, 'store');
      const store = new Store({ dataDir, types: [CM] });
      const { bavail, bsize } = statfsSync(disk);
      writeFileSync(join(disk, 'filler'), Buffer.alloc(Math.max(0, bavail * bsize - 96 * 1024)));
      const acknowledged: string[] = [];
      let failure: unknown;
      for (let i = 0; i < 1_000 && failure === undefined; i++) {
        const name = `cm-${String(i).padStart(4, '0')}`;
        try {
          await store.create(CM, cm(name, { v: value }));
          acknowledged.push(name);
        } catch (error) {
          failure = error;
        }
      }
      expect(acknowledged.length).toBeGreaterThan(10);
      expect(failure).toBeInstanceOf(Error);
      expect((failure as { code?: string }).code, String(failure)).toMatch(/^CONVERGE_ERR_/);
      expect(JSON.stringify(failure, Object.getOwnPropertyNames(failure))).toMatch(/ENOSPC|no space/i);
      // What a client saw is what is stored: the failed write is not in the store either.
      expect((await store.list<ConfigMap>(CM)).items.map((o) => o.metadata.name).sort()).toEqual(
        acknowledged,
      );
      await store.close().catch(() => undefined);
      rmSync(join(disk, 'filler'));
      expect(await names(dataDir)).toEqual(acknowledged);
    });

    it('a data dir on a read-only disk (EROFS): the store does not start or write, with a typed error, and every acknowledged write is there once the disk is writable', async () => {
      const disk = smallDisk();
      const dataDir = join(disk, 'store');
      const store = new Store({ dataDir, types: [CM] });
      for (let i = 0; i < 5; i++) await store.create(CM, cm(`before-${i}`, { v: value }));
      await store.close();
      // (A tmpfs with files open for writing cannot be remounted read-only: the store is closed first.)
      execFileSync('mount', ['-o', 'remount,ro', disk]);
      const refused = await (async () => {
        const s = new Store({ dataDir, types: [CM] });
        try {
          await s.create(CM, cm('while-read-only', { v: value }));
          return undefined;
        } finally {
          await s.close().catch(() => undefined);
        }
      })().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect((refused as { code?: string } | undefined)?.code, String(refused)).toMatch(/^CONVERGE_ERR_/);
      expect(JSON.stringify(refused, Object.getOwnPropertyNames(refused))).toMatch(/EROFS|read-only/i);
      execFileSync('mount', ['-o', 'remount,rw', disk]);
      const expected = [0, 1, 2, 3, 4].map((i) => `before-${i}`);
      expect(await names(dataDir)).toEqual(expected);
      const reopened = new Store({ dataDir, types: [CM] });
      await reopened.create(CM, cm('after', { v: value }));
      await reopened.close();
      expect(await names(dataDir)).toEqual(['after', ...expected]);
    });
  },
);
