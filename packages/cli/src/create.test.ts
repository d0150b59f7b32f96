import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { create } from './create.ts';
import { main } from './main.ts';
import { INIT_HELP } from './scaffold/index.ts';

const work = mkdtempSync(join(tmpdir(), 'converge-create-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function io(): { out: string[]; err: string[]; io: Parameters<typeof create>[2] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (l) => out.push(l), err: (l) => err.push(l), stopped: Promise.resolve() } };
}

describe('create (what npm create converge runs, bundled into create-converge)', () => {
  it('makes the project converge init makes, depending on the version it is given', async () => {
    const viaCreate = join(work, 'a', 'my-operator');
    const viaInit = join(work, 'b', 'my-operator');
    const a = io();
    expect(create([viaCreate, '--kind', 'Guestbook'], '9.8.7', a.io)).toBe(0);
    expect(a.out[0]).toBe(`converge: created my-operator in ${viaCreate}`);
    expect(a.out).toContain('  npm install');
    const b = io();
    expect(await main(['init', viaInit, '--kind', 'Guestbook'], b.io)).toBe(0);
    // The same files, line for line, but for the version of the dependencies.
    expect(a.out.slice(1)).toEqual(b.out.slice(1).map((l) => l.replaceAll(viaInit, viaCreate)));
    const manifest = JSON.parse(readFileSync(join(viaCreate, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(Object.keys(manifest.dependencies).length).toBeGreaterThan(0);
    for (const [name, range] of Object.entries(manifest.dependencies)) {
      expect(name).toMatch(/^@converge\//);
      expect(range).toBe('^9.8.7');
    }
    expect(readFileSync(join(viaCreate, 'src', 'operator.ts'), 'utf8')).toBe(
      readFileSync(join(viaInit, 'src', 'operator.ts'), 'utf8'),
    );
  });

  it('answers --help with init’s usage, and a bad flag with exit 2 and the usage', () => {
    const help = io();
    expect(create(['--help'], '1.0.0', help.io)).toBe(0);
    expect(help.out.join('\n')).toBe(INIT_HELP);
    const bad = io();
    expect(create(['--no-such-flag'], '1.0.0', bad.io)).toBe(2);
    expect(bad.err[0]).toMatch(/no-such-flag/);
    expect(bad.err.join('\n')).toContain(INIT_HELP);
  });

  it('refuses a folder that is not empty with exit 1 and a typed reason, writing nothing', () => {
    const dir = join(work, 'taken');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'keep.txt'), 'mine');
    const refused = io();
    expect(create([dir], '1.0.0', refused.io)).toBe(1);
    expect(refused.err.join('\n')).toMatch(/^converge: .*is not empty.*\(\w+\)$/s);
    expect(readFileSync(join(dir, 'keep.txt'), 'utf8')).toBe('mine');
  });
});
