/**
 * Every TypeScript block of every docs page compiles: each ```ts fence of docs/**\/*.md is a module
 * (scripts/doc-blocks.ts, with its `<!-- ts-prelude … -->` if it has one), type-checked against the
 * packages' sources with the repository's compiler options. A wrong argument count, a renamed
 * option or a missing import in a page a team copies from fails here, not in their editor.
 */
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { blocksOf, docBlocks } from '../scripts/doc-blocks.ts';

const repo = fileURLToPath(new URL('..', import.meta.url));
// Inside the repository, so that `@converge/*` and the dependencies resolve as in an operator.
const work = mkdtempSync(join(repo, 'node_modules', '.doc-blocks-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/**
 * Packages the pages show but the repository does not install (a user adds them): any import of
 * them type-checks, as `any`.
 */
const EXTERNAL_MODULES = ['@opentelemetry/sdk-node', '@opentelemetry/exporter-trace-otlp-proto'];

function compilerOptions(): ts.CompilerOptions {
  const config = ts.readConfigFile(join(repo, 'tsconfig.base.json'), ts.sys.readFile);
  if (config.error !== undefined)
    throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, work);
  return {
    ...parsed.options,
    noEmit: true,
    composite: false,
    incremental: false,
    declaration: false,
    declarationMap: false,
    sourceMap: false,
    rootDir: work,
    allowImportingTsExtensions: true,
    // A page may declare a name only to show it, or leave a parameter unused in a fragment.
    noUnusedLocals: false,
    noUnusedParameters: false,
  };
}

/** The type errors of `files` (name → code), one line each, with the page and line they come from. */
function typeErrors(
  files: readonly { file: string; code: string; where: (line: number) => string }[],
): string[] {
  for (const { file, code } of files) writeFileSync(join(work, file), code);
  // writing-a-reconciler's Testing block imports the operator of its page as ./operator.ts
  // (docs/guide/testing-snippet.test.ts runs it beside the same file).
  copyFileSync(join(repo, 'docs', 'guide', 'testdata', 'snippet', 'operator.ts'), join(work, 'operator.ts'));
  const ambient = join(work, 'external-modules.d.ts');
  writeFileSync(ambient, EXTERNAL_MODULES.map((name) => `declare module '${name}';\n`).join(''));
  const byName = new Map(files.map((f) => [join(work, f.file), f]));
  const program = ts.createProgram({
    rootNames: [...byName.keys(), ambient],
    options: compilerOptions(),
  });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const text = ts.flattenDiagnosticMessageText(d.messageText, ' ');
    if (d.file === undefined || d.start === undefined) return text;
    const { line } = d.file.getLineAndCharacterOfPosition(d.start);
    const source = byName.get(d.file.fileName);
    return `${source === undefined ? d.file.fileName : source.where(line + 1)}: ${text}`;
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
 * (~10 s on a quiet machine); with a second suite beside this one it took over 60 s.
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
