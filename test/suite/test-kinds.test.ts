/**
 * scripts/test-kinds.ts puts each test file in the vitest project its needs call for. The markers
 * are assembled from pieces here so that this file itself reads as a unit test.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { testKind } from '../../scripts/test-kinds.ts';

const node = (module: string): string => `import x from '${'node'}:${module}';\n`;
const dir = mkdtempSync(join(tmpdir(), 'converge-test-kinds-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(path: string, source: string): string {
  const full = join(dir, path);
  mkdirSync(join(full, '..'), { recursive: true });
  writeFileSync(full, source);
  return full;
}

describe('which project a test file runs in', () => {
  it('code that only imports the code under test is a unit test, whatever its comments say', () => {
    expect(
      testKind(file('a/pure.test.ts', "// kubectl and postgres in a comment\nimport { x } from './x.ts';\n")),
    ).toBe('unit');
  });

  it('a child process, NATS or PostgreSQL makes it a process test; a socket alone a server test', () => {
    expect(testKind(file('b/spawns.test.ts', node('child_process')))).toBe('process');
    expect(testKind(file('b/nats.test.ts', `const url = '${'nats'}://127.0.0.1:4222';\n`))).toBe('process');
    expect(testKind(file('b/pg.test.ts', `import pg from '${'pg'}';\n`))).toBe('process');
    expect(testKind(file('b/http.test.ts', node('http')))).toBe('server');
    expect(testKind(file('b/both.test.ts', node('http') + node('child_process')))).toBe('process');
  });

  it('follows test helpers it imports (support, harness, fixtures, test/ folders), not shipped modules', () => {
    file('c/kubectl-support.ts', node('child_process'));
    expect(testKind(file('c/uses-support.test.ts', "import { run } from './kubectl-support.ts';\n"))).toBe(
      'process',
    );
    file('c/test/deep.ts', node('net'));
    file('c/harness.ts', "export * from './test/deep.ts';\n");
    expect(testKind(file('c/uses-harness.test.ts', "import { h } from './harness.ts';\n"))).toBe('server');
    // A shipped module may spawn for its own reasons (an exec credential plugin): not followed.
    file('c/exec-credential.ts', node('child_process'));
    expect(testKind(file('c/uses-module.test.ts', "import { exec } from './exec-credential.ts';\n"))).toBe(
      'unit',
    );
  });

  it('survives import cycles between helpers', () => {
    file('d/a-support.ts', "import './b-support.ts';\n");
    file('d/b-support.ts', `import './a-support.ts';\n${node('child_process')}`);
    expect(testKind(file('d/cycle.test.ts', "import './a-support.ts';\n"))).toBe('process');
  });
});
