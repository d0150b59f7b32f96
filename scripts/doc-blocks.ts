/**
 * The TypeScript blocks of the documentation (every ```ts fence of docs/**\/*.md), as the files a
 * type check compiles: `docs-<page>-<n>.ts`, each its own module. A block that continues an earlier
 * one, or uses names the page introduced in prose, says what it assumes in an HTML comment right
 * above its fence, which readers do not see rendered:
 *
 *     <!-- ts-prelude
 *     import type { Manager } from '@converge/runtime';
 *     declare const manager: Manager;
 *     -->
 *
 * The prelude is put before the block's code. There is no way to leave a block out.
 */
import { globSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface DocBlock {
  /** The page, relative to the repository. */
  readonly page: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** A file name for the block: `docs-<page path with dashes>-<n>.ts`. */
  readonly file: string;
  /** The prelude (may be empty) and the block's code. */
  readonly code: string;
  /** Lines the prelude added before the block's first line. */
  readonly preludeLines: number;
}

const FENCE = /^```ts\n([\s\S]*?)^```$/gm;
// The comment right above a fence: its text may not hold another `<!--` (so an earlier prelude
// on the page, with prose and blocks after it, never reads as this block's).
const PRELUDE = /<!--\s*ts-prelude\n((?:(?!<!--)[\s\S])*?)-->\s*$/;

/** The blocks of one Markdown text. */
export function blocksOf(page: string, text: string): DocBlock[] {
  const base = page
    .replace(/\.md$/, '')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
  return [...text.matchAll(FENCE)].map((match, i) => {
    const before = text.slice(0, match.index);
    const prelude = PRELUDE.exec(before)?.[1] ?? '';
    const line = before.split('\n').length;
    return {
      page,
      line,
      file: `${base}-${i + 1}.ts`,
      code: `${prelude}${match[1] as string}`,
      preludeLines: prelude === '' ? 0 : prelude.split('\n').length - 1,
    };
  });
}

/** Every block of every page under `docs/` of `repo`. */
export function docBlocks(repo: string): DocBlock[] {
  return globSync('docs/**/*.md', { cwd: repo })
    .sort()
    .flatMap((page) => blocksOf(relative(repo, join(repo, page)), readFileSync(join(repo, page), 'utf8')));
}
