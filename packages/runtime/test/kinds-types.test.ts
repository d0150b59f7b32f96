import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { typeCheck } from '../../../scripts/tsc.ts';

const fixture = fileURLToPath(new URL('./fixtures/typed-client.ts', import.meta.url));
const tsconfig = fileURLToPath(new URL('./tsconfig.json', import.meta.url));
const work = mkdtempSync(
  join(fileURLToPath(new URL('../../../node_modules/', import.meta.url)), '.kinds-types-'),
);
afterAll(() => rmSync(work, { recursive: true, force: true }));

/**
 * Compiles `files` with this folder's compiler options (with the repository's compiler,
 * scripts/tsc.ts); the diagnostics, one line each.
 */
function diagnostics(files: readonly string[]): string[] {
  const project = join(work, 'tsconfig.json');
  writeFileSync(
    project,
    JSON.stringify({
      extends: tsconfig,
      compilerOptions: { incremental: false, tsBuildInfoFile: null },
      files,
      include: [],
    }),
  );
  return typeCheck(project).map(({ file, line, text }) =>
    file === undefined ? text : `${file}:${line}: ${text}`,
  );
}

describe('typed kinds and the client’s generics (type-level)', () => {
  it('infer shapes from the kind constants, accept client-node models and loose shapes, and reject wrong fields', () => {
    // Every positive case must compile and every `@ts-expect-error` line must be an error
    // (an unused one is a diagnostic of its own).
    expect(diagnostics([fixture])).toEqual([]);
  });
});
