/**
 * What a benchmark part hands to the orchestrator (`bench/run.ts`): its tables, the points of its
 * charts, its goals and its correctness checks, as JSON in the file named by `BENCH_RESULT_FILE`.
 * A part run alone (`npm run bench:*`) prints the same content as Markdown and writes no file.
 * Parts that predate this file print text only; the orchestrator reads their verdict lines.
 */
import { writeFileSync } from 'node:fs';

/** A table, every cell already formatted. */
export interface ResultTable {
  readonly title: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

/** One point of a chart: the median `y` at `x`, with the min–max over runs. */
export interface ChartPoint {
  readonly x: number;
  readonly y: number;
  readonly min: number;
  readonly max: number;
}

/** One line of a chart: a system, its points, and the x values where it did not complete. */
export interface ChartSeries {
  readonly name: string;
  readonly points: readonly ChartPoint[];
  readonly failedAt?: readonly number[];
}

/** A chart the orchestrator renders to SVG. */
export interface ChartSpec {
  /** File name without extension: kebab-case. */
  readonly id: string;
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly logX?: boolean;
  readonly logY?: boolean;
  readonly series: readonly ChartSeries[];
}

/** A goal of the issue: met or not, with the figure and the ratio that decide it. */
export interface GoalVerdict {
  readonly goal: string;
  readonly met: boolean;
  readonly measured: string;
  /** Why it is missed and what would close it (only for a missed goal). */
  readonly explanation?: string;
}

/** A check that must hold on every run, small or full (an object lost, a key reconciled twice). */
export interface CorrectnessCheck {
  readonly check: string;
  readonly ok: boolean;
  readonly detail?: string;
}

export interface PartResult {
  readonly part: string;
  readonly title: string;
  readonly method: readonly string[];
  readonly tables: readonly ResultTable[];
  readonly charts: readonly ChartSpec[];
  readonly goals: readonly GoalVerdict[];
  readonly correctness: readonly CorrectnessCheck[];
  readonly notes: readonly string[];
}

/** A Markdown table. Pipes inside cells are escaped. */
export function markdownTable(table: ResultTable): string {
  const cell = (text: string): string => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
  const lines = [
    `| ${table.columns.map(cell).join(' | ')} |`,
    `| ${table.columns.map(() => '---').join(' | ')} |`,
    ...table.rows.map((row) => `| ${row.map(cell).join(' | ')} |`),
  ];
  return lines.join('\n');
}

/** The part as Markdown: what a part run alone prints, and what the report embeds. */
export function partMarkdown(result: PartResult, headingLevel = 2): string {
  const h = '#'.repeat(headingLevel);
  const out: string[] = [`${h} ${result.title}`, ''];
  if (result.method.length > 0) out.push(...result.method.map((m) => `- ${m}`), '');
  for (const table of result.tables) out.push(`**${table.title}**`, '', markdownTable(table), '');
  if (result.goals.length > 0) {
    out.push('Goals:', '');
    for (const goal of result.goals) {
      out.push(`- ${goal.met ? 'MET' : '**MISSED**'} — ${goal.goal}: ${goal.measured}`);
      if (!goal.met && goal.explanation !== undefined) out.push(`  ${goal.explanation}`);
    }
    out.push('');
  }
  const failed = result.correctness.filter((c) => !c.ok);
  out.push(
    failed.length === 0
      ? `Correctness: all ${result.correctness.length} checks held.`
      : `Correctness: **${failed.length} of ${result.correctness.length} checks failed**: ${failed
          .map((c) => `${c.check}${c.detail === undefined ? '' : ` (${c.detail})`}`)
          .join('; ')}`,
    '',
  );
  for (const note of result.notes) out.push(`- ${note}`);
  return out.join('\n').trimEnd();
}

/**
 * Ends a part: writes `result` to `BENCH_RESULT_FILE` when the orchestrator set it, prints it as
 * Markdown, and sets the exit status to 1 when a correctness check failed (a missed goal never
 * does).
 */
export function finishPart(result: PartResult): void {
  const file = process.env.BENCH_RESULT_FILE;
  if (file !== undefined && file !== '') writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`\n${partMarkdown(result)}`);
  if (result.correctness.some((c) => !c.ok)) process.exitCode = 1;
}
