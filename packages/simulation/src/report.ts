import type { SimulationReport } from './simulate.ts';

/** Lines of a trace shown in a report before the rest is elided. */
const TRACE_LINES = 60;

/** The report in words, as `converge simulate` prints it. */
export function formatReport(report: SimulationReport): string {
  const lines: string[] = [];
  const rate = report.elapsedMs > 0 ? (report.seedsRun / (report.elapsedMs / 1000)).toFixed(1) : '∞';
  const head = `${report.scenario}: ${report.seedsRun} seed${report.seedsRun === 1 ? '' : 's'}, faults ${report.faults.join(',') || 'none'}${report.replicas > 1 ? `, ${report.replicas} replicas${report.sharded ? ` (sharded${report.shardBy === 'uid' ? ' by uid' : ''})` : ''}` : ''} — ${report.totals.reconciles} reconciles, ${report.totals.faults} faults injected, ${(report.elapsedMs / 1000).toFixed(1)} s (${rate} seeds/s)`;
  if (report.passed) {
    lines.push(`ok ${head}`);
    return lines.join('\n');
  }
  lines.push(`FAIL ${head}`);
  for (const f of report.failures) {
    lines.push('');
    lines.push(
      `seed ${f.seed} violates ${f.violation.kind === 'invariant' ? `invariant "${f.violation.name}"` : `oracle ${f.violation.name}`}:`,
    );
    lines.push(`  ${f.shrunk.violation.message}`);
    lines.push('');
    lines.push(
      `shrunk to ${f.shrunk.faults.length} fault${f.shrunk.faults.length === 1 ? '' : 's'} (from ${countFaults(f.trace)}, ${f.shrunk.runs} reruns); its trace:`,
    );
    const trace = f.shrunk.trace;
    const shown =
      trace.length > TRACE_LINES
        ? [
            ...trace.slice(0, 15),
            `  … ${trace.length - TRACE_LINES} lines …`,
            ...trace.slice(-(TRACE_LINES - 15)),
          ]
        : trace;
    for (const line of shown) lines.push(`  ${line}`);
    if (f.shrunk.logs.length > 0) {
      lines.push('');
      lines.push('last warnings and errors the operator logged:');
      for (const line of f.shrunk.logs.slice(-8)) lines.push(`  ${line}`);
    }
    lines.push('');
    lines.push(`replay the shrunk failure: ${f.replayShrunk}`);
    lines.push(`replay it as found:        ${f.replay}`);
  }
  return lines.join('\n');
}

function countFaults(trace: readonly string[]): number {
  return trace.filter((l) => / fault #\d+ /.test(l)).length;
}
