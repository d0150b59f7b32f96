// docs/compatibility.md cannot claim what is not tested: every row that names a test must name one
// that exists, every "works" row must name one, and every test of this folder has a row.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('../..', import.meta.url).pathname;

interface Row {
  readonly flow: string;
  readonly result: string;
  readonly testedBy: string;
}

/** The rows of every four-column table (Flow | Result | Notes | Tested by) in the document. */
function compatibilityRows(markdown: string): Row[] {
  const rows: Row[] = [];
  for (const line of markdown.split('\n')) {
    if (!line.startsWith('|') || /^\|\s*(Flow|---)/.test(line)) continue;
    const cells = line
      .slice(1, line.endsWith('|') ? -1 : undefined)
      .split(/(?<!\\)\|/)
      .map((cell) => cell.trim());
    if (cells.length !== 4) throw new Error(`a row without four cells: ${line}`);
    rows.push({ flow: cells[0] as string, result: cells[1] as string, testedBy: cells[3] as string });
  }
  return rows;
}

/** `path` › `name prefix` → the two parts; undefined for "—". */
function testReference(cell: string): { file: string; name: string } | undefined {
  if (cell === '—') return undefined;
  const match = /^`([^`]+)` › `([^`]+)`$/.exec(cell);
  if (!match) throw new Error(`a "Tested by" cell not of the form \`file\` › \`test name\`: ${cell}`);
  return { file: match[1] as string, name: match[2] as string };
}

/** The names of the `it(...)` tests in a source file. */
function testNames(source: string): string[] {
  return [...source.matchAll(/\bit(?:\.\w+)?\(\s*(['"`])((?:\\.|(?!\1).)*)\1/g)].map((m) =>
    (m[2] as string).replace(/\\(.)/g, '$1'),
  );
}

const doc = readFileSync(join(root, 'docs/compatibility.md'), 'utf8');

describe('docs/compatibility.md', () => {
  it('each row is works, differs or not supported, and every works row names a test', () => {
    const rows = compatibilityRows(doc);
    expect(rows.length).toBeGreaterThan(20);
    for (const row of rows) {
      expect(['works', 'differs', 'not supported'], row.flow).toContain(row.result);
      if (row.result === 'works') expect(testReference(row.testedBy), row.flow).toBeDefined();
    }
  });

  it('every named test exists in the named file', () => {
    for (const row of compatibilityRows(doc)) {
      const ref = testReference(row.testedBy);
      if (ref === undefined) continue;
      const names = testNames(readFileSync(join(root, ref.file), 'utf8'));
      expect(
        names.some((name) => name.startsWith(ref.name)),
        `${row.flow}: no test starting "${ref.name}" in ${ref.file}`,
      ).toBe(true);
    }
  });

  it('every test of test/compatibility/ has a row', () => {
    const named = compatibilityRows(doc).flatMap((row) => {
      const ref = testReference(row.testedBy);
      return ref === undefined ? [] : [ref];
    });
    const dir = join(root, 'test/compatibility');
    let checked = 0;
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.test.ts') && f !== 'doc.test.ts')) {
      for (const name of testNames(readFileSync(join(dir, file), 'utf8'))) {
        expect(
          named.some((ref) => ref.file === `test/compatibility/${file}` && name.startsWith(ref.name)),
          `${file}: "${name}" has no row in docs/compatibility.md`,
        ).toBe(true);
        checked++;
      }
    }
    expect(checked).toBe(28);
  });

  it('the parser rejects a row with a wrong cell count and a malformed reference', () => {
    expect(() => compatibilityRows('| a | works | b |')).toThrow('four cells');
    expect(compatibilityRows('| Flow | Result | Notes | Tested by |\n| --- | --- | --- | --- |')).toEqual([]);
    expect(() => testReference('python.test.ts › configmap')).toThrow('Tested by');
    expect(testNames("it('a \\'b\\' c', () => {});\n  it(\n    \"d\", x)")).toEqual(["a 'b' c", 'd']);
  });
});
