import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { PARTS } from '../../bench/parts.ts';

const RUN = fileURLToPath(new URL('../../bench/run.ts', import.meta.url));

interface Summary {
  readonly report: string;
  readonly charts: readonly string[];
  readonly parts: readonly {
    name: string;
    ok: boolean;
    status: string;
    failedChecks: string[];
    checks: number;
  }[];
}

describe('npm run bench -- --small (what CI runs)', () => {
  const out = mkdtempSync(join(tmpdir(), 'converge-bench-test-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it(
    'runs every part, every correctness check holds, and writes the report and its charts',
    async () => {
      const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
        const child = spawn(
          process.execPath,
          ['--conditions=@converge/source', RUN, '--small', '--out', out],
          {
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        );
        let text = '';
        child.stdout.on('data', (chunk: Buffer) => {
          text += chunk.toString('utf8');
        });
        child.stderr.on('data', (chunk: Buffer) => {
          text += chunk.toString('utf8');
        });
        child.on('close', (exitCode) => resolve({ code: exitCode, output: text }));
      });
      const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;
      const failed = summary.parts.filter((p) => !p.ok || p.failedChecks.length > 0);
      const logs = failed.map(
        (p) => `${p.name}: ${readFileSync(join(out, 'logs', `${p.name}.log`), 'utf8').slice(-3000)}`,
      );
      expect(
        failed.map((p) => `${p.name} ${p.status} ${p.failedChecks.join('; ')}`),
        `${output}\n${logs.join('\n')}`,
      ).toEqual([]);
      expect(code).toBe(0);
      expect(summary.parts.map((p) => p.name).sort()).toEqual(PARTS.map((p) => p.name).sort());
      // Parts that report structured results carry their correctness checks.
      for (const part of PARTS.filter((p) => p.structured)) {
        expect(summary.parts.find((p) => p.name === part.name)?.checks, part.name).toBeGreaterThan(0);
      }

      const report = readFileSync(summary.report, 'utf8');
      for (const line of [
        '- machine: ',
        '- node: v',
        '- date: ',
        '- load average (1 / 5 / 15 min) at start: ',
        'SMALL run',
      ])
        expect(report).toContain(line);
      for (const part of PARTS) expect(report).toContain(`npm run ${part.npmScript}`);
      expect(report).toContain('Goals of issue 17');

      expect(summary.charts.length).toBeGreaterThanOrEqual(8);
      for (const chart of summary.charts) {
        expect(existsSync(chart), chart).toBe(true);
        const svg = readFileSync(chart, 'utf8');
        expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'), chart).toBe(true);
        expect(svg, chart).not.toMatch(/NaN|Infinity/);
        expect(report).toContain(`](charts/${chart.slice(chart.lastIndexOf('/') + 1)})`);
      }
      // A hang detector: ~80 s alone, ~155 s with a second copy of the suite beside it, and each part
      // may take up to its own hang detector (bench/parts.ts).
    },
    20 * 60_000,
  );
});
