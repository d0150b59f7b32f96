import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ChartSpec, PartResult } from '../../bench/part-result.ts';
import { markdownTable, partMarkdown } from '../../bench/part-result.ts';
import { PARTS } from '../../bench/parts.ts';
import { BEGIN_MARKER, END_MARKER, renderReport, spliceReport, verdictLines } from '../../bench/report.ts';
import { renderChart, tickLabel } from '../../bench/svg-chart.ts';

const chart = (series: ChartSpec['series'], extra: Partial<ChartSpec> = {}): ChartSpec => ({
  id: 'c',
  title: 'A <chart> & "title"',
  xLabel: 'objects',
  yLabel: 'µs',
  series,
  ...extra,
});

describe('renderChart', () => {
  it('draws a line, a min–max bar and a legend entry per series, and escapes text', () => {
    const svg = renderChart(
      chart(
        [
          {
            name: 'Converge',
            points: [
              { x: 10_000, y: 2, min: 1.5, max: 2.5 },
              { x: 100_000, y: 2.1, min: 2, max: 2.2 },
            ],
          },
          { name: 'client-node', points: [{ x: 10_000, y: 9, min: 9, max: 9 }], failedAt: [100_000] },
        ],
        { logX: true },
      ),
    );
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg).toContain('A &lt;chart&gt; &amp; &quot;title&quot;');
    expect(svg.match(/<path d="M/g)?.length).toBe(2); // Converge's line and client-node's cross
    expect(svg).toContain('did not complete');
    expect(svg).toContain('>Converge</text>');
    expect(svg).toContain('>client-node</text>');
  });

  it('never writes NaN or Infinity, whatever the points (empty, zero on a log axis, non-finite)', () => {
    const value = fc.oneof(
      fc.double({ noNaN: false }),
      fc.constantFrom(0, -1, Number.POSITIVE_INFINITY, Number.NaN),
    );
    const point = fc.record({ x: value, y: value, min: value, max: value });
    fc.assert(
      fc.property(
        fc.array(fc.record({ name: fc.string(), points: fc.array(point, { maxLength: 5 }) }), {
          maxLength: 4,
        }),
        fc.boolean(),
        fc.boolean(),
        (series, logX, logY) => {
          const svg = renderChart(chart(series, { logX, logY }));
          expect(svg).not.toMatch(/NaN|Infinity/);
          expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('labels ticks shortly', () => {
    expect([tickLabel(0), tickLabel(10_000), tickLabel(1_000_000), tickLabel(1500), tickLabel(0.25)]).toEqual(
      ['0', '10k', '1M', '1.5k', '0.25'],
    );
  });
});

describe('the report', () => {
  const result: PartResult = {
    part: 'p',
    title: 'A part',
    method: ['how'],
    tables: [{ title: 'T', columns: ['a', 'b|c'], rows: [['1', 'x|y']] }],
    charts: [],
    goals: [
      { goal: 'fast', met: true, measured: '2×' },
      { goal: 'lean', met: false, measured: '1.3×', explanation: 'the parser keeps the strings' },
    ],
    correctness: [{ check: 'no object lost', ok: false, detail: '3 lost' }],
    notes: [],
  };

  it('escapes pipes in tables and says which goal is missed, why, and which check failed', () => {
    expect(markdownTable(result.tables[0] as PartResult['tables'][number])).toBe(
      '| a | b\\|c |\n| --- | --- |\n| 1 | x\\|y |',
    );
    const md = partMarkdown(result);
    expect(md).toContain('- MET — fast: 2×');
    expect(md).toContain('- **MISSED** — lean: 1.3×\n  the parser keeps the strings');
    expect(md).toContain('**1 of 1 checks failed**: no object lost (3 lost)');
  });

  it('reads PASS/FAIL verdict lines from text output, and nothing else', () => {
    expect(verdictLines('x\nPASS  one (1)\n  FAIL: two\nPASSING is not a verdict\nFAIL — three')).toEqual([
      { pass: true, text: 'one (1)' },
      { pass: false, text: 'two' },
      { pass: false, text: 'three' },
    ]);
  });

  it('is spliced between its markers, keeping every hand-written section, and splicing again replaces it', () => {
    const part = PARTS[0] as (typeof PARTS)[number];
    const report = renderReport({
      small: false,
      date: 'd',
      finished: 'f',
      machine: 'm',
      node: 'n',
      loadAtStart: '1',
      loadAtEnd: '2',
      commit: 'c',
      runs: [
        {
          part,
          ok: true,
          status: 'ok',
          ms: 1000,
          loadBefore: '1',
          loadAfter: '2',
          startedAt: '2026-11-26T16:47:10.000Z',
          finishedAt: '2026-11-26T17:02:57.000Z',
          commit: '1bf648ae2f41',
          kept: true,
          output: 'out ```',
          result,
        },
      ],
      charts: [],
    });
    // a part kept by --merge says when and on which commit it ran, and the header says what kept means
    expect(report).toContain('| 2026-11-26 16:47 (kept), 1bf648ae2f41 |');
    expect(report).toContain('parts marked (kept) were not run this time');
    expect(report.startsWith(BEGIN_MARKER)).toBe(true);
    expect(report.endsWith(END_MARKER)).toBe(true);
    expect(report).toContain('````text\nout ```\n````'); // a fence longer than any backtick run in the output
    const original = '# Benchmarks\n\nIntro.\n\n## Queue\n\nfigures\n';
    const once = spliceReport(original, report);
    expect(once).toBe(`# Benchmarks\n\nIntro.\n\n${report}\n\n## Queue\n\nfigures\n`);
    expect(spliceReport(once, report)).toBe(once);
    expect(spliceReport(once, `${BEGIN_MARKER}\nnew\n${END_MARKER}`)).toBe(
      `# Benchmarks\n\nIntro.\n\n${BEGIN_MARKER}\nnew\n${END_MARKER}\n\n## Queue\n\nfigures\n`,
    );
  });
});

describe('the parts', () => {
  it('have unique names, and each runs alone through an npm script of the root package.json', async () => {
    const { readFile } = await import('node:fs/promises');
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(new Set(PARTS.map((p) => p.name)).size).toBe(PARTS.length);
    for (const part of PARTS)
      expect(pkg.scripts[part.npmScript], part.npmScript).toContain(`bench/${part.script}`);
    expect(pkg.scripts.bench).toContain('bench/run.ts');
  });
});
