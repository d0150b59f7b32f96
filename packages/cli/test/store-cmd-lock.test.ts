/**
 * `converge store check|repair` and the data directory's lock: check reads an open directory and
 * warns who holds it; repair, which writes, refuses it; a dead process's lock is reported by check
 * and taken over by repair.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store, StoreLockedError } from '@converge/store';
import { afterEach, describe, expect, it } from 'vitest';
import { runStore } from '../src/store-cmd.ts';

const CM = { group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A serve-style data directory root (the store in ROOT/store) with one ConfigMap, open. */
async function openDataDir(): Promise<{ root: string; dir: string; store: Store }> {
  const root = mkdtempSync(join(tmpdir(), 'converge-store-lock-'));
  dirs.push(root);
  const dir = join(root, 'store');
  const store = new Store({ dataDir: dir, types: [CM] });
  await store.create(CM, { metadata: { name: 'a', namespace: 'default' }, data: { k: 'v' } });
  return { root, dir, store };
}

function run(verb: 'check' | 'repair', dataDir: string): { code: number; out: string; err: string } {
  const out: string[] = [];
  const err: string[] = [];
  const code = runStore(
    { verb, dataDir, json: false },
    { out: (line) => out.push(line), err: (line) => err.push(line) },
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid as number;
}

describe('converge store check|repair and the data directory lock', () => {
  it('check reads a directory a store has open, exits 0 and warns who holds it; repair refuses it with StoreLockedError', async () => {
    const { root, dir, store } = await openDataDir();
    try {
      const check = run('check', root);
      expect(check.code).toBe(0);
      expect(check.out).toContain('live: 1 objects');
      expect(check.err).toContain(
        `converge store: WARNING: ${dir} is in use: locked by process ${process.pid} on host ${hostname()}`,
      );
      let refused: unknown;
      try {
        run('repair', root);
      } catch (error) {
        refused = error;
      }
      expect(refused).toBeInstanceOf(StoreLockedError);
      expect((refused as Error).message).toContain(dir);
    } finally {
      await store.close();
    }
    expect(run('check', root).err).toBe('');
    expect(run('repair', root)).toMatchObject({ code: 0, out: expect.stringContaining('nothing to repair') });
  });

  it('a lock left by a dead process: check says the next start takes it over; repair takes it over and says so', async () => {
    const { root, dir, store } = await openDataDir();
    await store.close();
    const pid = await deadPid();
    const lock = { pid, hostname: hostname(), startedAt: '2020-01-01T00:00:00.000Z', id: 'cd'.repeat(16) };
    writeFileSync(join(dir, 'LOCK'), JSON.stringify(lock));
    const check = run('check', root);
    expect(check.err).toBe('');
    expect(check.out).toContain(
      `lock: left by process ${pid} on host ${hostname()}, which is gone; the next start takes it over`,
    );
    const repair = run('repair', root);
    expect(repair.code).toBe(0);
    expect(repair.out).toContain(
      `lock: took over the lock of process ${pid} on host ${hostname()}, which is gone`,
    );
  });
});
