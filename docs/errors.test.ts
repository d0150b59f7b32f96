import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('..', import.meta.url).pathname;
const catalogue = readFileSync(join(root, 'docs/errors.md'), 'utf8');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' || name === 'dist' ? [] : sources(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

/**
 * The section of the catalogue each area of codes is documented in: the area is the first word
 * after `CONVERGE_ERR_` (`CONVERGE_ERR_BACKEND_NOT_FOUND` → `BACKEND`).
 */
const SECTION_OF_AREA: Readonly<Record<string, string>> = {
  OPTIONS: 'Error catalogue',
  RECONCILE: 'Error catalogue',
  LIFECYCLE: 'Error catalogue',
  SOURCE: 'Error catalogue',
  ABORTED: 'Error catalogue',
  DYNAMIC: 'Runtime kinds',
  WATCHER: 'Watchers',
  BACKEND: 'Backend errors',
  INFORMER: 'Informer and cache',
  CACHE: 'Informer and cache',
  MANAGER: 'Manager and client',
  CLIENT: 'Manager and client',
  STORE: 'Store',
  APISERVER: 'API server',
  LEADER: 'Leader election',
  SHARD: 'Sharding',
  EVENTS: 'Events',
  KUBE: 'Kubernetes backend',
  KIND: 'Kinds',
  NATS: 'NATS backend',
  METRICS: 'Metrics and probes',
  CLI: 'Command line',
  SIMULATION: 'Simulation',
};

/** What the cells of a column may hold, by header. */
const COLUMN_CELL: Readonly<Record<string, RegExp>> = {
  code: /^`CONVERGE_ERR_[A-Z0-9_]+`$/,
  class: /^(`[A-Z][A-Za-z0-9]*Error`|—)$/,
  status: /^(—|\d{3}(, \d{3})*)$/,
  'status / reason': /^\d{3}( [A-Z][A-Za-z]+)?$/,
  // Prose: not empty, and not just a code span (a class or a code in the wrong column).
  meaning: /^(?!`[^`]*`$).{12,}$/,
  'how to fix': /^(?!`[^`]*`$).{6,}$/,
};

interface Row {
  readonly line: number;
  readonly cells: readonly string[];
}

interface Table {
  readonly section: string;
  readonly line: number;
  readonly rows: readonly Row[];
}

/** The cells of a table line: split on unescaped pipes, trimmed. */
function cells(line: string): string[] {
  const inner = line.trim().replace(/^\|/, '').replace(/\|$/, '');
  return inner.split(/(?<!\\)\|/).map((c) => c.trim());
}

/** Every table of a Markdown text (runs of lines starting with `|`), with the heading above it. */
function tables(markdown: string): Table[] {
  const found: Table[] = [];
  let section = '';
  let current: { section: string; line: number; rows: Row[] } | undefined;
  markdown.split('\n').forEach((text, i) => {
    const heading = /^#{1,6}\s+(.*)$/.exec(text);
    if (heading) section = (heading[1] ?? '').replace(/\s*\(.*\)$/, '');
    if (text.trimStart().startsWith('|')) {
      current ??= { section, line: i + 1, rows: [] };
      current.rows.push({ line: i + 1, cells: cells(text) });
    } else if (current !== undefined) {
      found.push(current);
      current = undefined;
    }
  });
  if (current !== undefined) found.push(current);
  return found;
}

/** What is wrong with the catalogue's tables, one message per problem. */
function tableProblems(markdown: string): string[] {
  const problems: string[] = [];
  const seen = new Map<string, number>();
  for (const table of tables(markdown)) {
    const [header, separator, ...rows] = table.rows;
    const at = `table at line ${table.line} ("${table.section}")`;
    if (header === undefined || separator === undefined) {
      problems.push(`${at}: a table needs a header row and a separator row`);
      continue;
    }
    const columns = header.cells;
    if (columns[0] !== 'code') {
      problems.push(
        `${at}: the first column must be "code", and every code row must be in a table (got "${columns[0]}")`,
      );
    }
    const unknown = columns.filter((c) => !(c in COLUMN_CELL));
    if (unknown.length > 0) problems.push(`${at}: unknown columns ${unknown.join(', ')}`);
    if (separator.cells.length !== columns.length || !separator.cells.every((c) => /^:?-{3,}:?$/.test(c))) {
      problems.push(`line ${separator.line}: the separator row must have ${columns.length} cells of dashes`);
    }
    for (const row of rows) {
      if (row.cells.length !== columns.length) {
        problems.push(`line ${row.line}: ${row.cells.length} cells, the header has ${columns.length}`);
        continue;
      }
      row.cells.forEach((cell, i) => {
        const column = columns[i] ?? '';
        const pattern = COLUMN_CELL[column];
        if (pattern !== undefined && !pattern.test(cell)) {
          problems.push(`line ${row.line}: "${cell.slice(0, 40)}" does not belong in column "${column}"`);
        }
      });
      const code = /^`CONVERGE_ERR_([A-Z0-9]+)[A-Z0-9_]*`$/.exec(row.cells[0] ?? '');
      if (code === null) continue;
      const name = (row.cells[0] ?? '').slice(1, -1);
      const area = code[1] ?? '';
      const expected = SECTION_OF_AREA[area];
      if (expected === undefined) problems.push(`line ${row.line}: ${name}: no section for the area ${area}`);
      else if (expected !== table.section) {
        problems.push(`line ${row.line}: ${name} belongs in the "${expected}" table, not "${table.section}"`);
      }
      const previous = seen.get(name);
      if (previous !== undefined)
        problems.push(`line ${row.line}: ${name} is also documented at line ${previous}`);
      seen.set(name, row.line);
    }
  }
  // A code row outside any table: a line that looks like a row but is not in a run of table lines.
  markdown.split('\n').forEach((text, i) => {
    if (/^\s*`CONVERGE_ERR_[A-Z0-9_]+`\s*\|/.test(text))
      problems.push(`line ${i + 1}: a code row outside a table`);
  });
  return problems;
}

describe('error catalogue', () => {
  it('documents every error code the packages define, and each code is defined once', () => {
    const seen = new Map<string, string>();
    const missing: string[] = [];
    for (const file of sources(join(root, 'packages'))) {
      for (const [, code] of readFileSync(file, 'utf8').matchAll(/:\s*'(CONVERGE_ERR_[A-Z_]+)'/g)) {
        if (code === undefined) continue;
        const previous = seen.get(code);
        expect(
          previous === undefined || previous === file,
          `${code} defined in ${previous} and ${file}`,
        ).toBe(true);
        seen.set(code, file);
        if (!catalogue.includes(`\`${code}\``)) missing.push(code);
      }
    }
    expect(seen.size).toBeGreaterThan(30);
    expect(missing).toEqual([]);
  });

  it('has well-formed tables: a header and a separator, as many cells on every row as the header, each kind of cell in its column, each code once, in the table of its area', () => {
    expect(tables(catalogue).length).toBeGreaterThanOrEqual(Object.keys(SECTION_OF_AREA).length - 6);
    expect(tableProblems(catalogue)).toEqual([]);
  });

  it('finds the problems it is meant to find', () => {
    const table = (...rows: string[]) =>
      ['## Store', '', '| code | meaning | how to fix |', '| --- | --- | --- |', ...rows].join('\n');
    const ok = '| `CONVERGE_ERR_STORE_CORRUPT` | The data directory is damaged. | Restore it. |';
    expect(tableProblems(table(ok))).toEqual([]);
    expect(tableProblems(table('| `CONVERGE_ERR_STORE_CORRUPT` | The data directory is damaged. |'))).toEqual(
      ['line 5: 2 cells, the header has 3'],
    );
    expect(tableProblems(table(ok.replace('STORE_CORRUPT', 'LEADER_LOST')))).toEqual([
      'line 5: CONVERGE_ERR_LEADER_LOST belongs in the "Leader election" table, not "Store"',
    ]);
    expect(tableProblems(table(ok, ok))).toEqual([
      'line 6: CONVERGE_ERR_STORE_CORRUPT is also documented at line 5',
    ]);
    expect(tableProblems(table('| `CONVERGE_ERR_STORE_CORRUPT` | `StoreError` | Restore it. |'))).toEqual([
      'line 5: "`StoreError`" does not belong in column "meaning"',
    ]);
    expect(tableProblems(`${table(ok)}\n\n${ok}`)).toEqual([
      'table at line 7 ("Store"): a table needs a header row and a separator row',
    ]);
    expect(tableProblems(`${table(ok)}\n\n\`CONVERGE_ERR_STORE_CORRUPT\` | x | y |`)).toEqual([
      'line 7: a code row outside a table',
    ]);
    expect(tableProblems(table(ok).replace('| --- | --- | --- |', '| --- | --- |'))).toEqual([
      'line 4: the separator row must have 3 cells of dashes',
    ]);
  });
});
