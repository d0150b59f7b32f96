/**
 * Every TypeScript block of every docs page compiles: each ```ts fence of docs/**\/*.md is a module
 * (scripts/doc-blocks.ts, with its `<!-- ts-prelude … -->` if it has one), type-checked against the
 * packages' sources with the repository's compiler options. A wrong argument count, a renamed
 * option or a missing import in a page a team copies from fails here, not in their editor.
 */
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { blocksOf, docBlocks } from '../scripts/doc-blocks.ts';
import { typeCheck } from '../scripts/tsc.ts';

const repo = fileURLToPath(new URL('..', import.meta.url));
// Inside the repository, so that `@converge/*` and the dependencies resolve as in an operator.
const work = mkdtempSync(join(repo, 'node_modules', '.doc-blocks-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/**
 * Packages the pages show but the repository does not install (a user adds them): any import of
 * them type-checks, as `any`.
 */
const EXTERNAL_MODULES = ['@opentelemetry/sdk-node', '@opentelemetry/exporter-trace-otlp-proto'];

/**
 * The repository's compiler options, as a module of an operator: type-check only, and a page may
 * declare a name only to show it, or leave a parameter unused in a fragment.
 */
function tsconfig(files: readonly string[]): string {
  const config = {
    extends: join(repo, 'tsconfig.base.json'),
    compilerOptions: {
      noEmit: true,
      composite: false,
      incremental: false,
      declaration: false,
      declarationMap: false,
      sourceMap: false,
      rootDir: '.',
      outDir: null,
      tsBuildInfoFile: null,
      allowImportingTsExtensions: true,
      noUnusedLocals: false,
      noUnusedParameters: false,
    },
    files,
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/**
 * The type errors of `files` (name → code), one line each, with the page and line they come from.
 * Checked by the compiler the repository builds with (scripts/tsc.ts, TypeScript 7).
 */
function typeErrors(
  files: readonly { file: string; code: string; where: (line: number) => string }[],
): string[] {
  for (const { file, code } of files) writeFileSync(join(work, file), code);
  // writing-a-reconciler's Testing block imports the operator of its page as ./operator.ts
  // (docs/guide/testing-snippet.test.ts runs it beside the same file).
  copyFileSync(join(repo, 'docs', 'guide', 'testdata', 'snippet', 'operator.ts'), join(work, 'operator.ts'));
  writeFileSync(
    join(work, 'external-modules.d.ts'),
    EXTERNAL_MODULES.map((name) => `declare module '${name}';\n`).join(''),
  );
  writeFileSync(
    join(work, 'tsconfig.json'),
    tsconfig([...files.map((f) => f.file), 'external-modules.d.ts']),
  );
  const byName = new Map(files.map((f) => [f.file, f]));
  return typeCheck(join(work, 'tsconfig.json')).map(({ file, line, text }) => {
    if (file === undefined || line === undefined) return text;
    const source = byName.get(file);
    return `${source === undefined ? file : source.where(line)}: ${text}`;
  });
}

/** A page with a wrong call (the real `event()` takes five arguments), checked beside the docs. */
const PROBE_PAGE = [
  '# A page',
  '',
  '<!-- ts-prelude',
  "import type { EventRecorder, KubeObject } from '@converge/runtime';",
  'declare const events: EventRecorder;',
  'declare const cm: KubeObject;',
  '-->',
  '```ts',
  "events.event(cm, 'Normal', 'Synced', 'created');",
  '```',
  '',
].join('\n');

/** One program for every block and the probe (a program costs seconds: the sources' types). */
let checked: { readonly blocks: number; readonly errors: string[] } | undefined;
function check(): { readonly blocks: number; readonly errors: string[] } {
  if (checked !== undefined) return checked;
  const blocks = [...docBlocks(repo), ...blocksOf('probe/example.md', PROBE_PAGE)];
  const errors = typeErrors(
    blocks.map((b) => ({
      file: b.file,
      code: b.code,
      // The page's own line: the fence's line, plus the line in the block (after the prelude).
      where: (line: number) =>
        line <= b.preludeLines
          ? `${b.page}:${b.line} (prelude line ${line})`
          : `${b.page}:${b.line + line - b.preludeLines}`,
    })),
  );
  checked = { blocks: blocks.length - 1, errors };
  return checked;
}

/**
 * A hang detector, not a bound: the one program type-checks the packages' sources the blocks import
 * (~10 s on a quiet machine with TypeScript 6, a third of that with 7); with a second suite beside
 * this one it took over 60 s.
 */
const CHECK_MS = 240_000;

describe('the TypeScript blocks of docs/**/*.md', { timeout: CHECK_MS }, () => {
  it('type-check, each as a module with its prelude, against the packages', () => {
    const { blocks, errors } = check();
    expect(blocks).toBeGreaterThanOrEqual(60);
    expect(errors.filter((e) => !e.startsWith('probe/'))).toEqual([]);
  });

  it('a block with a wrong call fails the check, named by page and line (the check can fail)', () => {
    const [block] = blocksOf('probe/example.md', PROBE_PAGE);
    expect(block).toMatchObject({ file: 'probe-example-1.ts', line: 8, preludeLines: 3 });
    expect(check().errors.filter((e) => e.startsWith('probe/'))).toEqual([
      'probe/example.md:9: Expected 5-6 arguments, but got 4.',
    ]);
  });
});
