/**
 * Fencing of a paused leader, as issue 30 asks to show it: two `converge run --leader-elect`
 * replicas against `converge serve`, the leader stopped (SIGSTOP) until the standby has taken over
 * and written, then resumed — ten rounds on a Kubernetes Lease, ten on a NATS KV lease, and ten on
 * a NATS KV lease with the objects themselves in NATS JetStream KV (`converge run --nats-backend`:
 * the NATS backend fences), and the same thirty as a control whose writes carry no fence. Every create the writers made is read back
 * with its resourceVersion; a create of the paused leader stored after the successor's first is a
 * stale write accepted. Prints one line per round and a summary; exits 1 if a fenced run accepted
 * any stale write.
 *
 *   LEADER_FENCING_ROUNDS  rounds per run (default 10)
 *   LEADER_FENCING_LOCKS   which runs, comma-separated: `lease`, `nats`, `nats-objects` (default all)
 *   LEADER_FENCING_CONTROL 0 leaves out the unfenced control runs (default 1)
 */
import { type PauseScenarioReport, runPauseScenario } from '../packages/cli/test/leader-pause.ts';
import { positiveInt } from './harness.ts';

const rounds = positiveInt('LEADER_FENCING_ROUNDS', 10);
const locks = (process.env.LEADER_FENCING_LOCKS ?? 'lease,nats,nats-objects').split(',').map((l) => l.trim());
for (const lock of locks) {
  if (lock !== 'lease' && lock !== 'nats' && lock !== 'nats-objects')
    throw new Error(`LEADER_FENCING_LOCKS: lease, nats or nats-objects, not ${JSON.stringify(lock)}`);
}
const LABELS = {
  lease: 'Kubernetes Lease',
  nats: 'NATS KV lease',
  'nats-objects': 'NATS KV lease, objects in NATS KV',
} as const;
const runs: { name: string; report: PauseScenarioReport; fenced: boolean }[] = [];
const control = process.env.LEADER_FENCING_CONTROL !== '0';
for (const fenced of control ? [true, false] : [true]) {
  for (const lock of locks as (keyof typeof LABELS)[]) {
    const name = `${LABELS[lock]}${fenced ? '' : ', unfenced control'}`;
    console.log(`${name}: ${rounds} rounds`);
    const report = await runPauseScenario({
      rounds,
      lock: lock === 'lease' ? 'lease' : 'nats',
      objects: lock === 'nats-objects' ? 'nats' : 'server',
      unfenced: !fenced,
      onRound: (r, i) =>
        console.log(
          `  ${i + 1}. ${r.from} → ${r.to}: paused ${Math.round(r.pausedMs)} ms, write under way at the pause: ` +
            `${r.inFlightAtPause ? 'yes' : 'no'}, attempts after it ${r.attemptsAfterPause}, refused ${r.refused}, ` +
            `stale accepted ${r.staleAccepted.length}`,
        ),
    });
    runs.push({ name, report, fenced });
  }
}
console.log(
  '\n| run | rounds | rounds with a write under way at the pause | attempts after the pause | refused (FencedError) | stale writes accepted |',
);
console.log('| --- | --- | --- | --- | --- | --- |');
for (const { name, report } of runs) {
  const sum = (f: (r: PauseScenarioReport['rounds'][number]) => number) =>
    report.rounds.reduce((n, r) => n + f(r), 0);
  console.log(
    `| ${name} | ${report.rounds.length} | ${sum((r) => (r.inFlightAtPause ? 1 : 0))} | ${sum((r) => r.attemptsAfterPause)} | ` +
      `${sum((r) => r.refused)} | ${sum((r) => r.staleAccepted.length)} |`,
  );
}
const stale = (fenced: boolean) =>
  runs
    .filter((r) => r.fenced === fenced)
    .reduce((n, r) => n + r.report.rounds.reduce((m, x) => m + x.staleAccepted.length, 0), 0);
const fencedRounds = runs.filter((r) => r.fenced).reduce((n, r) => n + r.report.rounds.length, 0);
const failed = stale(true) > 0;
console.log(
  `${failed ? 'FAIL' : 'PASS'} — no write of a paused, resumed leader accepted after the hand-over: ` +
    `${stale(true)} stale writes accepted in ${fencedRounds} fenced rounds (${locks.join(', ')}); the unfenced control accepted ${stale(false)}`,
);
for (const { name, report } of runs) for (const e of report.errors) console.log(`${name}: error: ${e}`);
console.log(failed ? 'FAILED: a fenced run accepted a stale write' : 'ok');
process.exitCode = failed ? 1 : 0;
