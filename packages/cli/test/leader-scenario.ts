/**
 * Leader election between real processes, repeated: one `converge serve` and two
 * `converge run --leader-elect` replicas running the leader recorder (`fixtures/leader-recorder.ts`).
 * Each repetition sends the leader SIGKILL or SIGTERM (chosen by a seeded generator, after a seeded
 * delay so the signal lands anywhere in the renew cycle), starts a replacement under a new
 * identity, and waits until the other replica leads and reconciles and the replacement is ready.
 * A watch records the lease's holders; at the end the lease's transitions count is read and the
 * replicas' logs are analysed (`leader-analysis.ts`).
 *
 * The replicas elect on a Kubernetes Lease on the served API (`lock: 'lease'`, the default) or on
 * a KV lease on the shared NATS server (`lock: 'nats'`, `--lease-backend nats`, a bucket of the
 * run's own, deleted after); either way `converge serve` runs, for the operators' work.
 *
 * Shared by `leader-election.test.ts` (a few repetitions in CI) and `bench/leader-soak.ts` (many).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { IDENTITY_ENV, type LeaderEntry, LOG_ENV } from './fixtures/leader-recorder.ts';
import {
  analyse,
  type Handover,
  type HandoverAction,
  type HandoverBounds,
  handoverBounds,
  type LeaderAnalysis,
} from './leader-analysis.ts';
import { kubernetesLease, type LeaderLockKind, natsLease, type ScenarioLease } from './leader-leases.ts';
import {
  type ConvergeProcess,
  now,
  readJsonLines,
  sleep,
  spawnConverge,
  waitFor,
  within,
} from './processes.ts';

const RECORDER = fileURLToPath(new URL('./fixtures/leader-recorder.ts', import.meta.url));
const LEASE = 'leader-scenario';

export type { LeaderLockKind } from './leader-leases.ts';

export interface LeaderScenarioOptions {
  /** Hand-overs to cause. */
  readonly repetitions: number;
  /** What the replicas elect on: a Kubernetes Lease (`lease`) or a NATS KV lease (`nats`). Default `lease`. */
  readonly lock?: LeaderLockKind;
  /** Seeds the choice of signal and the delay before it. */
  readonly seed: number;
  /** Default 1000. The Lease stores whole seconds, so keep it a multiple of 1000. */
  readonly leaseDurationMs?: number;
  /** Default 700. */
  readonly renewDeadlineMs?: number;
  /** Default 100. */
  readonly retryPeriodMs?: number;
  /** Added to every upper bound of a hand-over, for process scheduling on a loaded machine. Default 1500. */
  readonly marginMs?: number;
  /** Called after each hand-over, for progress reports. */
  readonly onHandover?: (handover: Handover, index: number) => void;
}

export interface LeaderScenarioReport extends LeaderAnalysis {
  readonly lock: LeaderLockKind;
  readonly seed: number;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly bounds: HandoverBounds;
  readonly handovers: readonly Handover[];
  /** Identities in the order they started leading, from the logs. */
  readonly leaders: readonly string[];
  /** Holders of the lease in the order a watch saw them, released states left out. */
  readonly holders: readonly string[];
  /** `spec.leaseTransitions` of the Lease, or of the KV lease document, at the end. */
  readonly leaseTransitions: number;
  readonly durationMs: number;
}

interface Replica extends ConvergeProcess {
  readonly identity: string;
  /** Its log file. */
  readonly log: string;
}

/** mulberry32: a small seeded generator of numbers in [0, 1). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const readEntries = (file: string): LeaderEntry[] => readJsonLines<LeaderEntry>(file);

/** The first entry of `kind` in a replica's log later than `after`. */
const entry = (r: Replica, kind: LeaderEntry['kind'], after = 0): LeaderEntry | undefined =>
  readEntries(r.log).find((e) => e.kind === kind && e.at > after);

/** What a replica logged last about releasing the Lease (the message, and the error if any). */
function releaseMessage(output: string): string | undefined {
  const line = output
    .split('\n')
    .filter((l) => /"msg":"[^"]*[Rr]eleas/.test(l))
    .at(-1);
  if (line === undefined) return undefined;
  const { msg, err } = JSON.parse(line) as { msg: string; err?: { message?: string } };
  return err?.message === undefined ? msg : `${msg}: ${err.message}`;
}

/** Runs the scenario. Throws if a wait times out; otherwise reports what happened, for the caller to judge. */
export async function runLeaderScenario(options: LeaderScenarioOptions): Promise<LeaderScenarioReport> {
  const { repetitions, seed, leaseDurationMs = 1000, renewDeadlineMs = 700, retryPeriodMs = 100 } = options;
  const lock = options.lock ?? 'lease';
  const marginMs = options.marginMs ?? 1500;
  const bounds = handoverBounds({ leaseDurationMs, renewDeadlineMs, retryPeriodMs, marginMs });
  const next = random(seed);
  const began = now();
  const dir = mkdtempSync(join(tmpdir(), 'converge-leader-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const processes: ConvergeProcess[] = [];
  const replicas: Replica[] = [];
  const killedAt = new Map<string, number>();
  const handovers: Handover[] = [];
  const problems: string[] = [];
  const watching = new AbortController();
  let lease: ScenarioLease | undefined;
  const context = (): string =>
    replicas
      .map((r) => `--- ${r.identity} (exit ${r.child.exitCode ?? r.child.signalCode}):\n${r.output()}`)
      .join('\n');
  const replica = (): Replica => {
    const identity = `replica-${replicas.length}`;
    const log = join(dir, `${identity}.jsonl`);
    const proc = spawnConverge(
      dir,
      [
        ...['run', RECORDER, '--kubeconfig', kubeconfig, '--leader-elect', ...(lease?.args ?? [])],
        ...['--identity', identity, '--lease-duration-ms', `${leaseDurationMs}`],
        ...['--renew-deadline-ms', `${renewDeadlineMs}`, '--retry-period-ms', `${retryPeriodMs}`],
      ],
      { [LOG_ENV]: log, [IDENTITY_ENV]: identity },
    );
    const r = { ...proc, identity, log };
    processes.push(proc);
    replicas.push(r);
    return r;
  };
  /**
   * `r`, or a failure at once if it exited: a wait for what a dead replica would log is otherwise
   * a two-minute wait for nothing (a replica starved past its renew deadline exits, as it should).
   */
  const exited = (r: Replica): boolean => r.child.exitCode !== null || r.child.signalCode !== null;
  const alive = (r: Replica): Replica => {
    if (!exited(r)) return r;
    throw new Error(
      `${r.identity} exited (${r.child.exitCode ?? r.child.signalCode}) before the scenario was done\n${context()}`,
    );
  };
  const stop = async (proc: ConvergeProcess, name: string): Promise<void> => {
    proc.child.kill('SIGTERM');
    const exit = await within(`${name} to exit`, proc.exited, context);
    if (!cleanOrLost(exit, proc.stderr()))
      problems.push(`${name} exited with ${exit.code ?? exit.signal} after SIGTERM: ${tail(proc.stderr())}`);
  };

  try {
    const server = spawnConverge(dir, ['serve', '--port', '0', '--kubeconfig', kubeconfig]);
    processes.push(server);
    const serving = () => (server.output().includes('serving Kubernetes API') ? true : undefined);
    await waitFor('the API server', serving, server.output);
    lease = lock === 'nats' ? await natsLease(LEASE) : kubernetesLease(kubeconfig, LEASE);
    const holders = lease.recordHolders(watching.signal).catch((error: unknown) => {
      problems.push(`the lease watch failed: ${String(error)}`);
      return [];
    });

    let leader = replica();
    const first = await waitFor(`${leader.identity} to lead`, () => entry(alive(leader), 'start'), context);
    let standby = replica();
    await waitFor(`${standby.identity} to be ready`, () => entry(alive(standby), 'ready'), context);
    await waitFor(
      `${leader.identity} to reconcile`,
      () => entry(alive(leader), 'reconcile', first.at),
      context,
    );

    for (let i = 0; i < repetitions; i++) {
      await sleep(next() * 2 * retryPeriodMs);
      const action: HandoverAction = next() < 0.5 ? 'kill' : 'term';
      const signalledAt = now();
      leader.child.kill(action === 'kill' ? 'SIGKILL' : 'SIGTERM');
      const exit = await within(`${leader.identity} to exit`, leader.exited, context);
      if (action === 'kill') killedAt.set(leader.identity, exit.at);
      else if (!cleanOrLost(exit, leader.stderr()))
        problems.push(
          `${leader.identity} exited with ${exit.code ?? exit.signal} after SIGTERM: ${tail(leader.stderr())}`,
        );
      const replacement = replica();
      // Any start counts, even one before the signal: the analysis then shows the overlap.
      const [successor, start] = await waitFor(
        `a leader after ${leader.identity} got SIG${action === 'kill' ? 'KILL' : 'TERM'}`,
        () => {
          for (const r of [standby, replacement]) {
            const e = entry(r, 'start');
            if (e !== undefined) return [r, e] as const;
          }
          if (exited(standby) && exited(replacement)) alive(replacement);
          return undefined;
        },
        context,
      );
      const release =
        action !== 'term'
          ? undefined
          : lostLeadership(leader.stderr())
            ? LOST_BEFORE_SIGNAL
            : releaseMessage(leader.output());
      const handover: Handover = {
        action,
        from: leader.identity,
        to: successor.identity,
        ms: start.at - signalledAt,
        ...(release === undefined ? {} : { release }),
      };
      handovers.push(handover);
      options.onHandover?.(handover, i);
      const other = successor === standby ? replacement : standby;
      await waitFor(
        `${successor.identity} to reconcile`,
        () => entry(successor, 'reconcile', start.at),
        context,
      );
      await waitFor(`${other.identity} to be ready`, () => entry(other, 'ready'), context);
      leader = successor;
      standby = other;
    }

    // The standby first: stopped after the leader, it could take over from the leader's release.
    await stop(standby, standby.identity);
    await stop(leader, leader.identity);
    const leaseTransitions = await lease.transitions();
    watching.abort();
    const seen = await holders;
    await stop(server, 'converge serve');
    const analysis = analyse(
      replicas.flatMap((r) => readEntries(r.log)),
      killedAt,
    );
    return {
      ...analysis,
      problems: [...problems, ...analysis.problems],
      lock,
      seed,
      leaseDurationMs,
      renewDeadlineMs,
      retryPeriodMs,
      bounds,
      handovers,
      leaders: analysis.intervals.map((i) => i.identity),
      holders: seen,
      leaseTransitions,
      durationMs: now() - began,
    };
  } finally {
    watching.abort();
    for (const p of processes)
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await lease?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The last lines a process wrote to stderr, on one line: why it exited as it did. */
function tail(stderr: string): string {
  return stderr.trim().split('\n').slice(-4).join(' | ') || '(nothing on stderr)';
}

/** The manager's code when the elector stepped down because no renewal succeeded in time. */
const LEADERSHIP_LOST = 'CONVERGE_ERR_MANAGER_LEADERSHIP_LOST';
/** The hand-over's `release` when the old leader had lost the lease before it read its SIGTERM. */
const LOST_BEFORE_SIGNAL = 'Lost leadership before the signal (renew deadline missed); no release';

function lostLeadership(stderr: string): boolean {
  return stderr.includes(LEADERSHIP_LOST);
}

/**
 * How a replica may end after SIGTERM: exit 0, or — on a machine so loaded that it could not renew
 * within the renew deadline — exit 1 because it stepped down before it read the signal (the manager
 * ignores a loss once its stop has begun, so exit 1 with this code means the loss came first). That
 * step-down is the elector doing its job; the overlap analysis still checks nobody led beside it, and
 * the hand-over is held to the kill bound, as no release was written.
 */
function cleanOrLost(exit: { code: number | null }, stderr: string): boolean {
  return exit.code === 0 || (exit.code === 1 && lostLeadership(stderr));
}
