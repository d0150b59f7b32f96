/**
 * The "Testing" example of writing-a-reconciler.md, run as written: the block is read from the
 * guide, saved beside a small Website operator (testdata/snippet/operator.ts) and run with
 * `node --test`, so the guide's test cannot drift from the API.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
// Inside the repository (its ignored .converge/), so `@converge/*` resolve to the workspace.
const projects = join(root, '.converge', 'test-projects');
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The first TypeScript block of the guide's section `heading`. */
function example(guide: string, heading: string): string {
  const text = readFileSync(join(root, 'docs', 'guide', guide), 'utf8');
  const section = text.split(/^## /m).find((s) => s.startsWith(`${heading}\n`));
  const block = section === undefined ? undefined : /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error(`${guide}: no ts block under "## ${heading}"`);
  return block;
}

describe('writing-a-reconciler.md', () => {
  it('"Testing": the example test passes as written against a Website operator', async () => {
    mkdirSync(projects, { recursive: true });
    const dir = mkdtempSync(join(projects, 'guide-testing-'));
    dirs.push(dir);
    cpSync(
      fileURLToPath(new URL('./testdata/snippet/operator.ts', import.meta.url)),
      join(dir, 'operator.ts'),
    );
    writeFileSync(join(dir, 'website.test.ts'), example('writing-a-reconciler.md', 'Testing'));
    const { stdout } = await exec(
      process.execPath,
      ['--conditions=@converge/source', '--test', '--test-reporter=tap', 'website.test.ts'],
      { cwd: dir, timeout: 90_000 },
    ).catch((error: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`${error.message}\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
    });
    expect(stdout).toMatch(/^# pass 1$/m);
    expect(stdout).toMatch(/^# fail 0$/m);
    expect(stdout).toContain('ok 1 - a Website gets a Deployment with its replicas');
  });
});
