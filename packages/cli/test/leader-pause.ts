/**
 * A paused leader, resumed: one `converge serve` and two `converge run --leader-elect` replicas
 * running the fenced writer (`fixtures/fenced-writer.ts`, a ConfigMap created every few ms while
 * leading). Each round sends the leader SIGSTOP once it has written for a while, waits until the
 * standby leads and has written too, then sends SIGCONT: the resumed process finds its term over
 * and exits, and a replacement joins as the next standby. At the end every ConfigMap the writers
 * created is read back with its resourceVersion (the embedded server's revisions are ordered), and
 * each round is judged: a create of the paused leader stored after the new leader's first create
 * is a stale write accepted — fencing must refuse it (the writer logs the refusal).
 *
 * The replicas elect on a Kubernetes Lease on the served API (`lease`) or on a NATS KV lease on
 * the shared NATS server (`nats`); the writes go to `converge serve`, which fences them, or with
 * `objects: 'nats'` to NATS JetStream KV (`converge run --nats-backend`, buckets of the run's own
 * prefix, removed afterwards), where the NATS backend fences them.
 *
 * Shared by `leader-pause.test.ts` (a few rounds in CI) and `bench/leader-fencing.ts` (ten each).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeBackend, loadKubeconfig } from '@converge/kube';
import { NatsBackend } from '@converge/nats';
import { type Backend, type ConfigMap, configMapType } from '@converge/runtime';
import { sharedNatsUrl, uniqueSuffix } from '../../nats/src/test-harness.ts';
import { deleteBuckets } from '../../nats/src/test-support.ts';
import { OBJECTS_ENV, UNFENCED_ENV, WRITER_LABEL, type WriterEntry } from './fixtures/fenced-writer.ts';
import { IDENTITY_ENV, LOG_ENV } from './fixtures/leader-recorder.ts';
import { kubernetesLease, type LeaderLockKind, natsLease, type ScenarioLease } from './leader-leases.ts';
import { type ConvergeProcess, now, readJsonLines, spawnConverge, waitFor, within } from './processes.ts';

const WRITER = fileURLToPath(new URL('./fixtures/fenced-writer.ts', import.meta.url));
const LEASE = 'leader-pause';

export interface PauseScenarioOptions {
  readonly rounds: number;
  readonly lock?: LeaderLockKind;
  /** Default 1000 (the Lease stores whole seconds). */
  readonly leaseDurationMs?: number;
  /** Default 700. */
  readonly renewDeadlineMs?: number;
  /** Default 100. */
  readonly retryPeriodMs?: number;
  /** Creates the leader makes in its term before it is paused, and the successor before the resume. Default 10. */
  readonly writes?: number;
  readonly onRound?: (round: PauseRound, index: number) => void;
  /** The control: the writers bypass the client, so their writes carry no fence. Default false. */
  readonly unfenced?: boolean;
  /** Where the ConfigMaps live: `server` (converge serve, the default) or `nats` (JetStream KV). */
  readonly objects?: 'server' | 'nats';
}

/** One pause and resume. */
export interface PauseRound {
  readonly from: string;
  readonly to: string;
  /** How long the leader was stopped. */
  readonly pausedMs: number;
  /** Whether a create of the paused leader was under way (attempted, no outcome) when it was stopped. */
  readonly inFlightAtPause: boolean;
  /** Creates the paused leader attempted after it was stopped (the one under way included). */
  readonly attemptsAfterPause: number;
  /** Of those, refused by the server with a FencedError. */
  readonly refused: number;
  /** Objects of the paused leader stored after the successor's first create: stale writes accepted. */
  readonly staleAccepted: readonly string[];
  /** How the resumed leader exited. */
  readonly exit: string;
}

export interface PauseScenarioReport {
  readonly lock: LeaderLockKind;
  readonly objects: 'server' | 'nats';
  readonly rounds: readonly PauseRound[];
  /** Creates stored in all (every replica). */
  readonly stored: number;
  /** Writer log lines of kind `error` (not a refusal): anything else that failed. */
  readonly errors: readonly string[];
  readonly durationMs: number;
}

interface Replica extends ConvergeProcess {
  readonly identity: string;
  readonly log: string;
}

const readEntries = (file: string): WriterEntry[] => readJsonLines<WriterEntry>(file);

const entries = (r: Replica, kind: WriterEntry['kind'], after = 0): WriterEntry[] =>
  readEntries(r.log).filter((e) => e.kind === kind && e.at > after);

/** Runs the scenario; throws if a wait times out, otherwise reports for the caller to judge. */
export async function runPauseScenario(options: PauseScenarioOptions): Promise<PauseScenarioReport> {
  const { rounds, leaseDurationMs = 1000, renewDeadlineMs = 700, retryPeriodMs = 100, writes = 10 } = options;
  const lock = options.lock ?? 'lease';
  const began = now();
  const dir = mkdtempSync(join(tmpdir(), 'converge-pause-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const processes: ConvergeProcess[] = [];
  const replicas: Replica[] = [];
  const paused: { from: Replica; to: Replica; pausedAt: number; resumedAt: number; exit: string }[] = [];
  let lease: ScenarioLease | undefined;
  let backend: (Backend & { close(): Promise<void> }) | undefined;
  const objects = options.objects ?? 'server';
  const nats =
    objects === 'nats' ? { url: await sharedNatsUrl(), prefix: `pause${uniqueSuffix()}_` } : undefined;
  const context = (): string =>
    replicas
      .map((r) => `--- ${r.identity} (exit ${r.child.exitCode ?? r.child.signalCode}):\n${r.output()}`)
      .join('\n');
  const replica = (): Replica => {
    const identity = `writer-${replicas.length}`;
    const log = join(dir, `${identity}.jsonl`);
    const proc = spawnConverge(
      dir,
      [
        ...['run', WRITER, '--kubeconfig', kubeconfig, '--leader-elect', ...(lease?.args ?? [])],
        ...['--identity', identity, '--lease-duration-ms', `${leaseDurationMs}`],
        ...['--renew-deadline-ms', `${renewDeadlineMs}`, '--retry-period-ms', `${retryPeriodMs}`],
        ...(nats === undefined ? [] : ['--nats-backend', '--nats', nats.url]),
      ],
      {
        [LOG_ENV]: log,
        [IDENTITY_ENV]: identity,
        ...(options.unfenced === true ? { [UNFENCED_ENV]: '1' } : {}),
        ...(nats === undefined ? {} : { [OBJECTS_ENV]: 'nats', CONVERGE_NATS_BUCKET_PREFIX: nats.prefix }),
      },
    );
    const r = { ...proc, identity, log };
    processes.push(proc);
    replicas.push(r);
    return r;
  };
  const written = (r: Replica, after: number): number => entries(r, 'ok', after).length;

  try {
    const server = spawnConverge(dir, ['serve', '--port', '0', '--kubeconfig', kubeconfig]);
    processes.push(server);
    await waitFor(
      'the API server',
      () => (server.output().includes('serving Kubernetes API') ? true : undefined),
      server.output,
    );
    lease = lock === 'nats' ? await natsLease(`${LEASE}-${process.pid}`) : kubernetesLease(kubeconfig, LEASE);

    replica();
    replica();
    const live = (r: Replica): boolean => r.child.exitCode === null && r.child.signalCode === null;
    /**
     * A live replica other than `except` that leads (started after `after`, not stopped) and wrote
     * `writes` creates since. On a loaded machine a leader may lose its lease on its own (it then
     * exits); whenever fewer than two replicas (besides `except`) live, a replacement joins.
     */
    const writingLeader = (after: number, except?: Replica): Replica | undefined => {
      const candidates = replicas.filter((r) => r !== except && live(r));
      for (let n = candidates.length; n < 2; n++) candidates.push(replica());
      return candidates.find((r) => {
        const start = entries(r, 'start', after)[0];
        return (
          start !== undefined && entries(r, 'stop', start.at).length === 0 && written(r, start.at) >= writes
        );
      });
    };
    for (let i = 0; i < rounds; i++) {
      const leader = await waitFor('a leader that has written', () => writingLeader(0), context);
      leader.child.kill('SIGSTOP');
      const pausedAt = now();
      const successor = await waitFor(
        `another replica to take over from ${leader.identity} and write`,
        () => writingLeader(pausedAt, leader),
        context,
      );
      leader.child.kill('SIGCONT');
      const resumedAt = now();
      const exit = await within(`${leader.identity} to exit after it was resumed`, leader.exited, context);
      paused.push({ from: leader, to: successor, pausedAt, resumedAt, exit: `${exit.code ?? exit.signal}` });
    }
    backend =
      nats === undefined
        ? new KubeBackend({ config: loadKubeconfig({ path: kubeconfig }) })
        : await NatsBackend.connect({ servers: nats.url, types: [configMapType], bucketPrefix: nats.prefix });
    // Revisions are ordered within one store: converge serve's, or the NATS bucket's.
    const list = await backend.list<ConfigMap>(configMapType, {
      namespace: 'default',
      labelSelector: `${WRITER_LABEL}=true`,
    });
    const stored = list.items.map((o) => ({
      name: o.metadata.name ?? '',
      identity: o.data?.identity ?? '',
      rv: Number(o.metadata.resourceVersion),
    }));
    const report: PauseRound[] = paused.map(({ from, to, pausedAt, resumedAt, exit }) => {
      const log = readEntries(from.log);
      const before = log.filter((e) => e.at < pausedAt);
      const lastAttempt = before.filter((e) => e.kind === 'attempt').at(-1);
      const settled = (n: number) => before.some((e) => 'n' in e && e.n === n && e.kind !== 'attempt');
      const inFlightAtPause = lastAttempt !== undefined && 'n' in lastAttempt && !settled(lastAttempt.n);
      const after = log.filter((e) => e.at >= pausedAt && 'n' in e);
      const attemptsAfterPause = after.filter((e) => e.kind === 'attempt').length + (inFlightAtPause ? 1 : 0);
      const refused = after.filter((e) => e.kind === 'refused').length;
      const firstNew = Math.min(...stored.filter((s) => s.identity === to.identity).map((s) => s.rv));
      const staleAccepted = stored
        .filter((s) => s.identity === from.identity && s.rv > firstNew)
        .map((s) => s.name);
      return {
        from: from.identity,
        to: to.identity,
        pausedMs: resumedAt - pausedAt,
        inFlightAtPause,
        attemptsAfterPause,
        refused,
        staleAccepted,
        exit,
      };
    });
    for (const [index, round] of report.entries()) options.onRound?.(round, index);
    const errors = replicas.flatMap((r) =>
      entries(r, 'error').map((e) => `${r.identity}: ${'message' in e ? e.message : ''}`),
    );
    return { lock, objects, rounds: report, stored: stored.length, errors, durationMs: now() - began };
  } finally {
    for (const p of processes) {
      if (p.child.exitCode === null && p.child.signalCode === null) {
        p.child.kill('SIGCONT');
        p.child.kill('SIGKILL');
      }
    }
    await Promise.all(processes.map((p) => p.exited));
    await backend?.close();
    if (nats !== undefined) await deleteBuckets(nats.url, nats.prefix);
    await lease?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
