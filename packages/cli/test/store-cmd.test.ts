import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '@converge/store';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnConverge, waitFor } from './processes.ts';

const CM = { group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A serve-style data directory (the store in DIR/store) with `count` ConfigMaps written one by one. */
async function dataDir(count: number, fenceEpoch?: number): Promise<{ root: string; store: string }> {
  const root = mkdtempSync(join(tmpdir(), 'converge-store-cmd-'));
  dirs.push(root);
  const dir = join(root, 'store');
  const store = new Store({ dataDir: dir, types: [CM] });
  for (let i = 0; i < count; i++) {
    await store.create(CM, {
      metadata: { name: `cm-${i}`, namespace: 'default' },
      data: { v: 'x'.repeat(50) },
    });
  }
  if (fenceEpoch !== undefined)
    await store.announceFence({ name: 'default/op', holder: 'b', epoch: fenceEpoch });
  await store.close();
  return { root, store: dir };
}

async function converge(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const proc = spawnConverge(tmpdir(), args);
  const exit = await proc.exited;
  return { code: exit.code, out: proc.stdout(), err: proc.stderr() };
}

async function names(dir: string): Promise<string[]> {
  const store = new Store({ dataDir: dir, types: [CM] });
  const items = (await store.list(CM)).items.map((o) => o.metadata.name as string);
  await store.close();
  return items;
}

describe('converge store check|repair (real binary)', () => {
  it('check reports a healthy directory (records, live objects, sizes) and exits 0, given the serve data dir', async () => {
    const { root } = await dataDir(3, 4);
    const result = await converge(['store', 'check', '--data-dir', root]);
    expect(result.code).toBe(0);
    expect(result.out).toContain('fence marks: 1: default/op (epoch 4, b)');
    expect(result.out).toContain('log: ');
    expect(result.out).toContain('3 records');
    expect(result.out).toContain('live: 3 objects');
    expect(result.out).toMatch(/healthy\n?$/);
  });

  it('a damaged fences file: check exits 1 naming it; repair moves it aside, keeps every object and says the marks are lost', async () => {
    const { root, store } = await dataDir(2, 4);
    writeFileSync(join(store, 'fences'), 'CVGFNC1\nnot a record');
    const check = await converge(['store', 'check', '--data-dir', root]);
    expect(check.code).toBe(1);
    expect(check.out).toContain(`damage: ${join(store, 'fences')}`);
    const repair = await converge(['store', 'repair', '--data-dir', root]);
    expect(repair.code, repair.err).toBe(0);
    expect(repair.out).toContain('repaired: kept 2 objects');
    expect(repair.out).toContain('fence marks: lost with the damaged fences file');
    expect(await names(store)).toEqual(['cm-0', 'cm-1']);
  });

  it('check finds a flipped byte mid-log (exit 1, file and offset); repair keeps every write before it, backs up the damaged files and says what was dropped; no acknowledged write before the damage is lost', async () => {
    const { root, store } = await dataDir(6);
    const log = join(store, 'log');
    const bytes = readFileSync(log);
    const at = Math.floor(bytes.length * 0.6);
    bytes[at] = (bytes[at] as number) ^ 0x20;
    writeFileSync(log, bytes);
    const check = await converge(['store', 'check', '--data-dir', root]);
    expect(check.code).toBe(1);
    expect(check.out).toMatch(new RegExp(`damage: ${log} at byte \\d+`));
    expect(check.err).toContain(`converge store repair --data-dir ${root}`);
    const repair = await converge(['store', 'repair', '--data-dir', root]);
    expect(repair.code).toBe(0);
    expect(repair.out).toMatch(/dropped: .*log from byte \d+/);
    expect(repair.out).toMatch(/repaired: kept \d+ objects/);
    const backup = readdirSync(store).find((name) => name.startsWith('damaged-'));
    expect(backup).toBeDefined();
    expect(readFileSync(join(store, backup as string, 'log'))).toEqual(bytes);
    expect((await converge(['store', 'check', '--data-dir', root])).code).toBe(0);
    const kept = await names(store);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(6);
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => `cm-${i}`));
  });

  it('check refuses a directory whose log went missing (exit 1), and repair rebuilds it from the snapshot', async () => {
    const { store } = await dataDir(2);
    const s = new Store({ dataDir: store, types: [CM] });
    s.snapshot();
    await s.close();
    rmSync(join(store, 'log'));
    const check = await converge(['store', 'check', '--data-dir', store]);
    expect(check.code).toBe(1);
    expect(check.out).toContain('the log is missing');
    expect((await converge(['store', 'repair', '--data-dir', store])).code).toBe(0);
    expect(await names(store)).toEqual(['cm-0', 'cm-1']);
  });

  it('a bad verb or a missing --data-dir is a usage error (exit 2)', async () => {
    expect((await converge(['store', 'fix', '--data-dir', 'x'])).code).toBe(2);
    expect((await converge(['store', 'check'])).err).toContain('check needs --data-dir DIR');
  });
});

describe('a data dir whose store files went missing (real binary)', () => {
  it('serve refuses to start on an emptied log instead of starting an empty store, and starts empty only with --reinitialize-store', async () => {
    const { root, store } = await dataDir(3);
    writeFileSync(join(store, 'log'), '');
    const refused = await converge([
      'serve',
      '--port',
      '0',
      '--data-dir',
      root,
      '--kubeconfig',
      join(root, 'kc'),
    ]);
    expect(refused.code, refused.err).toBe(1);
    expect(refused.err).toContain('CONVERGE_ERR_STORE_DATA_MISSING');
    expect(await names(store).catch((error: Error) => error.name)).toBe('StoreDataMissingError');

    const proc = spawnConverge(tmpdir(), [
      'serve',
      '--port',
      '0',
      '--data-dir',
      root,
      '--kubeconfig',
      join(root, 'kc'),
      '--reinitialize-store',
    ]);
    try {
      await waitFor(
        'the server to start',
        () => (proc.stdout().includes('serving Kubernetes API') ? true : undefined),
        () => proc.stderr(),
      );
      expect(proc.stdout(), proc.stderr()).toContain('converge: serving Kubernetes API at');
    } finally {
      proc.child.kill('SIGINT');
      expect((await proc.exited).code).toBe(0);
    }
    expect(readdirSync(store).some((f) => f.startsWith('reinitialized-'))).toBe(true);
    // only what the server creates in every namespace (kube-root-ca.crt): the old objects are gone
    expect((await names(store)).filter((name) => name !== 'kube-root-ca.crt')).toEqual([]);
  });
});
