/**
 * Elastic sharding between real processes (issue 30): `converge serve`, SHARDING_OBJECTS ConfigMaps,
 * and 1, 2 and 4 `converge run --shard-group` replicas of the shard worker
 * (`packages/cli/test/fixtures/shard-worker.ts`): each object waits on a simulated external call of
 * SHARDING_WORK_MS (I/O-bound, so two cores can show scaling), then a fenced write marks it done.
 * Throughput is objects per second from the go signal (every replica sees every member) to the
 * last object done; then one hand-over run scales 2 → 3 → 2 (SIGTERM) and kills one replica
 * (SIGKILL) while the group works. Every replica's log is the shared ledger of reconcile starts and
 * ends: no key may run on two replicas at once, every object must be done, and the keys a stopped
 * or killed replica had under way must find a new owner within the lease duration plus 1 s.
 *
 *   SHARDING_OBJECTS      objects (default 10000)
 *   SHARDING_REPLICAS     replica counts to compare (default 1,2,4)
 *   SHARDING_WORK_MS      the simulated external call (default 20)
 *   SHARDING_CONCURRENCY  reconciles at once per replica (default 4)
 *   SHARDING_LEASE_MS     membership lease (default 2000)
 *   SHARDING_HANDOVER     0 skips the hand-over run (default 1)
 *   SHARDING_BY           key, uid or both: how the group splits keys (--shard-by; default both,
 *                         each replica count run once per mode, side by side)
 */
import { runShardScenario, type ShardScenarioReport } from '../packages/cli/test/shard-scenario.ts';
import { fmt, positiveInt } from './harness.ts';

const objects = positiveInt('SHARDING_OBJECTS', 10_000);
const workMs = positiveInt('SHARDING_WORK_MS', 20);
const concurrency = positiveInt('SHARDING_CONCURRENCY', 4);
const leaseDurationMs = positiveInt('SHARDING_LEASE_MS', 2_000);
const counts = (process.env.SHARDING_REPLICAS ?? '1,2,4').split(',').map((n) => {
  const value = Number(n);
  if (!Number.isInteger(value) || value < 1 || value > 16)
    throw new Error(`SHARDING_REPLICAS: bad count ${JSON.stringify(n)}`);
  return value;
});
const handover = process.env.SHARDING_HANDOVER !== '0';
const modes: readonly ('key' | 'uid')[] =
  process.env.SHARDING_BY === 'key' ? ['key'] : process.env.SHARDING_BY === 'uid' ? ['uid'] : ['key', 'uid'];
if (!['key', 'uid', 'both', undefined].includes(process.env.SHARDING_BY))
  throw new Error(`SHARDING_BY: key, uid or both, got ${JSON.stringify(process.env.SHARDING_BY)}`);
const progress = (line: string) => console.log(`  ${line}`);

console.log(
  `sharding: ${objects} objects, ${workMs} ms external call, ${concurrency} reconciles at once per replica, lease ${leaseDurationMs} ms`,
);
interface ModeRun extends ShardScenarioReport {
  readonly by: 'key' | 'uid';
}
const runs: ModeRun[] = [];
// The modes alternate at each replica count, so that a drift of the machine's load hits both.
for (const replicas of counts) {
  for (const by of modes) {
    console.log(`${replicas} replica${replicas === 1 ? '' : 's'}, sharded by ${by}:`);
    const report = await runShardScenario({
      replicas,
      objects,
      workMs,
      concurrency,
      leaseDurationMs,
      shardBy: by,
      onProgress: progress,
    });
    runs.push({ ...report, by });
  }
}
const baseOf = (by: 'key' | 'uid') => runs.find((r) => r.by === by && r.replicas === 1);
console.log(
  '\n| by | replicas | seconds | objects/s | speed-up | done per replica | cached per replica (fewest) | overlapping keys | unfinished | refused writes | aborted on hand-over | CPU s: server / replicas |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
for (const r of runs) {
  const base = baseOf(r.by);
  const speedUp = base === undefined ? undefined : r.perSecond / base.perSecond;
  console.log(
    `| ${r.by} | ${r.replicas} | ${fmt(r.seconds, 2)} | ${fmt(r.perSecond, 0)} | ${speedUp === undefined ? '—' : `${fmt(speedUp, 2)}×`} | ${Object.values(r.doneBy).join(' / ')} | ` +
      `${Object.values(r.cachedMin).join(' / ') || '—'} | ${r.overlaps.length} | ${r.unfinished} | ${r.refused} | ${r.aborted} | ` +
      `${r.cpuSeconds === undefined ? '—' : `${fmt(r.cpuSeconds.server, 1)} / ${fmt(r.cpuSeconds.replicas, 1)} (${fmt((r.cpuSeconds.server + r.cpuSeconds.replicas) / r.seconds, 2)} cores)`} |`,
  );
}
const ideal = concurrency * (1000 / workMs);
console.log(`(one replica's limit: ${concurrency} × 1000 / ${workMs} ms = ${fmt(ideal, 0)} objects/s)`);

let handoverReport: ShardScenarioReport | undefined;
if (handover) {
  console.log(
    '\nhand-over: 2 replicas, a third added at 20 %, one stopped (SIGTERM) at 45 %, one killed (SIGKILL) at 70 %',
  );
  const by = modes.at(-1) ?? 'key';
  console.log(`  sharded by ${by}`);
  handoverReport = await runShardScenario({
    replicas: 2,
    objects,
    workMs,
    concurrency,
    leaseDurationMs,
    shardBy: by,
    changes: [
      { action: 'add', atDone: 0.2 },
      { action: 'term', atDone: 0.45 },
      { action: 'kill', atDone: 0.7 },
    ],
    onProgress: progress,
  });
  for (const c of handoverReport.changes) {
    console.log(
      `  ${c.action} ${c.replica}: members ${c.members.join(', ')} agreed and running after ` +
        `${c.convergedMs === undefined ? '—' : `${fmt(c.convergedMs, 0)} ms`}; ${c.moved} keys under way moved, ` +
        `the last of them restarted elsewhere after ${c.maxOwnerlessMs === undefined ? '—' : `${fmt(c.maxOwnerlessMs, 0)} ms`} (behind the new owner's backlog)`,
    );
  }
  console.log(
    `  overlapping keys ${handoverReport.overlaps.length}, unfinished ${handoverReport.unfinished}, ` +
      `refused writes ${handoverReport.refused}, aborted reconciles ${handoverReport.aborted}, done per replica ${JSON.stringify(handoverReport.doneBy)}`,
  );
}

const verdicts: { pass: boolean; text: string }[] = [];
for (const by of modes) {
  const four = runs.find((r) => r.by === by && r.replicas === 4);
  const base = baseOf(by);
  if (four !== undefined && base !== undefined) {
    const ratio = four.perSecond / base.perSecond;
    verdicts.push({
      pass: ratio >= 3.5,
      text: `sharded by ${by}, 4 replicas ≥ 3.5× the throughput of 1: ${fmt(ratio, 2)}×`,
    });
  }
}
const all = [...runs, ...(handoverReport === undefined ? [] : [handoverReport])];
verdicts.push({
  pass: all.every((r) => r.overlaps.length === 0),
  text: `no key reconciled by two replicas at once: ${all.reduce((n, r) => n + r.overlaps.length, 0)} overlapping keys in ${all.length} runs`,
});
verdicts.push({
  pass: all.every((r) => r.unfinished === 0),
  text: `no key left unreconciled: ${all.reduce((n, r) => n + r.unfinished, 0)} unfinished`,
});
if (handoverReport !== undefined) {
  const bound = leaseDurationMs + 1000;
  const waits = handoverReport.changes.flatMap((c) =>
    c.action === 'add' ? [] : [c.convergedMs ?? Number.POSITIVE_INFINITY],
  );
  const worst = waits.length === 0 ? 0 : Math.max(...waits);
  verdicts.push({
    pass: worst <= bound,
    text: `after SIGTERM and SIGKILL every key had an owner again (every member agreed on the new group and ran) within the lease + 1 s (${bound} ms): longest ${fmt(worst, 0)} ms`,
  });
}
for (const v of verdicts) console.log(`${v.pass ? 'PASS' : 'FAIL'} — ${v.text}`);
// The goals are figures, not correctness: only overlap and lost keys fail the run.
const broken = all.some((r) => r.overlaps.length > 0 || r.unfinished > 0);
console.log(broken ? 'FAILED' : 'ok');
process.exitCode = broken ? 1 : 0;
