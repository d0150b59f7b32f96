/**
 * Elastic sharding between real processes: one `converge serve`, `objects` ConfigMaps to work on,
 * and `replicas` × `converge run --shard-group` running the shard worker
 * (`fixtures/shard-worker.ts`: each object takes a simulated external call of `workMs`, then a
 * fenced write marks it done). Once every replica sees every member, the ConfigMap
 * `shard-bench-go` starts the work and the clock. Every replica's log is the shared ledger of
 * reconcile starts and ends: the report counts keys whose reconciles overlapped on two replicas
 * (must be none), keys never done, and the throughput.
 *
 * Optional `changes` scale the group while it works (a replica added, one stopped with SIGTERM, one
 * killed with SIGKILL) once a share of the objects is done; the report then also has, per change,
 * how long the moved keys went without an owner.
 *
 * Shared by `shard-scenario.test.ts` (small) and `bench/sharding.bench.ts`.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeBackend, loadKubeconfig } from '@converge/kube';
import { type ConfigMap, configMapType } from '@converge/runtime';
import {
  CONCURRENCY_ENV,
  GO_NAME,
  WORK_LABEL,
  WORK_MS_ENV,
  WORKER_IDENTITY_ENV,
  WORKER_LOG_ENV,
  type WorkerEntry,
} from './fixtures/shard-worker.ts';
import {
  type ConvergeProcess,
  now,
  pollFor,
  readJsonLines,
  spawnConverge,
  waitFor,
  within,
} from './processes.ts';

const WORKER = fileURLToPath(new URL('./fixtures/shard-worker.ts', import.meta.url));

/** A change of the group while it works, made once `atDone` of the objects are done. */
export interface GroupChange {
  readonly action: 'add' | 'term' | 'kill';
  /** Fraction of the objects done when the change is made, in (0, 1). */
  readonly atDone: number;
}

export interface ShardScenarioOptions {
  readonly replicas: number;
  readonly objects: number;
  /** The simulated external call of each reconcile. Default 20. */
  readonly workMs?: number;
  /** Reconciles at once per replica. Default 16. */
  readonly concurrency?: number;
  /** Membership lease. Default 2000. */
  readonly leaseDurationMs?: number;
  /** `--shard-by`: split by request key (default) or by uid (each replica caches its share). */
  readonly shardBy?: 'key' | 'uid';
  readonly changes?: readonly GroupChange[];
  readonly onProgress?: (line: string) => void;
}

export interface ChangeReport {
  readonly action: GroupChange['action'];
  readonly replica: string;
  readonly at: number;
  /** Keys the changed replica had started but not done (they moved). */
  readonly moved: number;
  /**
   * The longest a moved key waited from the change to its next start elsewhere (ms): ownership
   * plus the new owner's queue backlog (its share of the objects still to do).
   */
  readonly maxOwnerlessMs: number | undefined;
  /** The members after the change. */
  readonly members: readonly string[];
  /**
   * From the change until every member after it reported (its `view` line) that very member set
   * in phase `member`: from then on every key has exactly one owner that may run it (ms).
   */
  readonly convergedMs: number | undefined;
}

export interface ShardScenarioReport {
  readonly replicas: number;
  readonly objects: number;
  readonly workMs: number;
  readonly concurrency: number;
  /** From the go signal to the last object done. */
  readonly seconds: number;
  readonly perSecond: number;
  /** Objects done by each replica, as the server has them. */
  readonly doneBy: Readonly<Record<string, number>>;
  /** Keys whose reconciles ran on two replicas at once. */
  readonly overlaps: readonly string[];
  /** Objects not marked done in the server at the end (the wait for them is the hang detector). */
  readonly unfinished: number;
  /** Writes the server refused with a FencedError (a replica writing for a key it had lost). */
  readonly refused: number;
  /** Reconciles aborted because their key moved. */
  readonly aborted: number;
  /**
   * The fewest work objects each replica's cached reads saw between go and the first change
   * (sampled every 100 ms): every object when sharded by key, about its share when by uid.
   */
  readonly cachedMin: Readonly<Record<string, number>>;
  /**
   * CPU seconds (user + system, from /proc) spent from the go signal to the last object done by
   * `converge serve` and by all replicas together: where a run short of its I/O limit spent the machine.
   */
  readonly cpuSeconds: { readonly server: number; readonly replicas: number } | undefined;
  readonly changes: readonly ChangeReport[];
}

interface Replica extends ConvergeProcess {
  readonly identity: string;
  readonly log: string;
}

/** CPU seconds a process used so far (utime + stime of /proc/<pid>/stat); undefined off Linux or once gone. */
function cpuSecondsOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

const readEntries = (file: string): WorkerEntry[] => readJsonLines<WorkerEntry>(file);

type KeyEntry = Extract<WorkerEntry, { key: string }>;

/**
 * Keys whose reconcile intervals on two different replicas overlap. A start with no end lasts
 * until its replica exited (`exits`: a killed replica's reconciles die with it), else to the end.
 */
export function overlappingKeys(
  entries: readonly KeyEntry[],
  exits: ReadonlyMap<string, number> = new Map(),
): string[] {
  const open = new Map<string, Map<string, number>>();
  const intervals = new Map<string, { identity: string; start: number; end: number }[]>();
  for (const e of [...entries].sort((a, b) => a.at - b.at)) {
    if (e.kind === 'start') {
      const byReplica = open.get(e.key) ?? new Map<string, number>();
      open.set(e.key, byReplica);
      byReplica.set(e.identity, e.at);
    } else if (e.kind === 'end') {
      const start = open.get(e.key)?.get(e.identity);
      if (start === undefined) continue;
      open.get(e.key)?.delete(e.identity);
      const list = intervals.get(e.key) ?? [];
      list.push({ identity: e.identity, start, end: e.at });
      intervals.set(e.key, list);
    }
  }
  // a start never ended lasts until its replica exited (killed), or to the end of the run
  for (const [key, byReplica] of open) {
    for (const [identity, start] of byReplica) {
      const list = intervals.get(key) ?? [];
      list.push({ identity, start, end: exits.get(identity) ?? Number.POSITIVE_INFINITY });
      intervals.set(key, list);
    }
  }
  const overlapping: string[] = [];
  for (const [key, list] of intervals) {
    const hit = list.some((a, i) =>
      list.some((b, j) => j > i && a.identity !== b.identity && a.start < b.end && b.start < a.end),
    );
    if (hit) overlapping.push(key);
  }
  return overlapping.sort();
}

/** Runs the scenario; throws if a wait times out, otherwise reports for the caller to judge. */
export async function runShardScenario(options: ShardScenarioOptions): Promise<ShardScenarioReport> {
  const { replicas: count, objects, workMs = 20, concurrency = 16, leaseDurationMs = 2000 } = options;
  const dir = mkdtempSync(join(tmpdir(), 'converge-shard-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const processes: ConvergeProcess[] = [];
  const replicas: Replica[] = [];
  let backend: KubeBackend | undefined;
  const context = (): string =>
    replicas
      .map(
        (r) =>
          `--- ${r.identity} (exit ${r.child.exitCode ?? r.child.signalCode}):\n${r.output().slice(-3000)}`,
      )
      .join('\n');
  const replica = (): Replica => {
    const identity = `worker-${replicas.length}`;
    const log = join(dir, `${identity}.jsonl`);
    const proc = spawnConverge(
      dir,
      [
        ...['run', WORKER, '--kubeconfig', kubeconfig, '--shard-group', 'shard-bench'],
        ...['--identity', identity, '--lease-duration-ms', `${leaseDurationMs}`],
        ...(options.shardBy === undefined ? [] : ['--shard-by', options.shardBy]),
        ...[
          '--renew-deadline-ms',
          `${Math.round(leaseDurationMs * 0.7)}`,
          '--retry-period-ms',
          `${Math.round(leaseDurationMs / 10)}`,
        ],
      ],
      {
        [WORKER_LOG_ENV]: log,
        [WORKER_IDENTITY_ENV]: identity,
        [WORK_MS_ENV]: String(workMs),
        [CONCURRENCY_ENV]: String(concurrency),
      },
    );
    const r = { ...proc, identity, log };
    processes.push(proc);
    replicas.push(r);
    return r;
  };
  const all = (): WorkerEntry[] => replicas.flatMap((r) => readEntries(r.log));
  const doneKeys = (): Set<string> => new Set(all().flatMap((e) => (e.kind === 'done' ? [e.key] : [])));
  const live = (r: Replica): boolean => r.child.exitCode === null && r.child.signalCode === null;

  try {
    const server = spawnConverge(dir, ['serve', '--port', '0', '--kubeconfig', kubeconfig]);
    processes.push(server);
    await waitFor(
      'the API server',
      () => (server.output().includes('serving Kubernetes API') ? true : undefined),
      server.output,
    );
    backend = new KubeBackend({ config: loadKubeconfig({ path: kubeconfig }) });
    const client = backend;
    const names = Array.from({ length: objects }, (_, i) => `work-${String(i).padStart(6, '0')}`);
    for (let i = 0; i < names.length; i += 64) {
      await Promise.all(
        names.slice(i, i + 64).map((name) =>
          client.create<ConfigMap>(configMapType, {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name, namespace: 'default', labels: { [WORK_LABEL]: 'work' } },
            data: { n: name },
          }),
        ),
      );
    }
    options.onProgress?.(`${objects} objects created`);
    for (let i = 0; i < count; i++) replica();
    const sees = (r: Replica, n: number): boolean => {
      const views = readEntries(r.log).filter((e) => e.kind === 'view');
      const last = views.at(-1);
      // Each sees every member, and runs under a claim of all of them (its share is settled).
      return (
        last !== undefined &&
        'members' in last &&
        last.members.length === n &&
        last.phase === 'member' &&
        (last.claim === undefined || last.claim.length === n)
      );
    };
    await waitFor(
      `all ${count} replicas to see each other`,
      () => (replicas.every((r) => sees(r, count)) ? true : undefined),
      context,
    );
    const cpu = () => {
      const server = cpuSecondsOf(processes[0]?.child.pid);
      const replicaSeconds = replicas.map((r) => cpuSecondsOf(r.child.pid));
      return server === undefined || replicaSeconds.some((c) => c === undefined)
        ? undefined
        : { server, replicas: replicaSeconds.reduce((a, b) => (a ?? 0) + (b ?? 0), 0) as number };
    };
    const cpuAtGo = cpu();
    const goAt = now();
    await client.create<ConfigMap>(configMapType, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: GO_NAME, namespace: 'default' },
    });
    options.onProgress?.(`go with ${count} replicas`);

    const changes: ChangeReport[] = [];
    const exits = new Map<string, number>();
    const current = new Set(replicas.map((r) => r.identity));
    for (const change of options.changes ?? []) {
      await waitFor(
        `${Math.round(change.atDone * 100)} % done`,
        () => (doneKeys().size >= change.atDone * objects ? true : undefined),
        context,
      );
      const at = now();
      if (change.action === 'add') {
        const added = replica();
        current.add(added.identity);
        changes.push({
          action: 'add',
          replica: added.identity,
          at,
          moved: 0,
          maxOwnerlessMs: undefined,
          members: [...current].sort(),
          convergedMs: undefined,
        });
      } else {
        const victim = replicas.find((r) => live(r));
        if (victim === undefined) throw new Error('no live replica to stop');
        victim.child.kill(change.action === 'kill' ? 'SIGKILL' : 'SIGTERM');
        const exit = await within(`${victim.identity} to exit`, victim.exited, context);
        exits.set(victim.identity, exit.at);
        const entries = readEntries(victim.log);
        const done = new Set(entries.flatMap((e) => (e.kind === 'done' ? [e.key] : [])));
        const started = new Set(
          entries.flatMap((e) => (e.kind === 'start' && !done.has(e.key) ? [e.key] : [])),
        );
        current.delete(victim.identity);
        changes.push({
          action: change.action,
          replica: victim.identity,
          at,
          moved: started.size,
          maxOwnerlessMs: undefined,
          members: [...current].sort(),
          convergedMs: undefined,
        });
      }
      options.onProgress?.(`${change.action} ${changes.at(-1)?.replica}`);
    }
    // Done as the server says: a replica killed between its write and its log line leaves an
    // object done that its log does not show. The list is read only near the end.
    const storedDone = async (): Promise<Map<string, string>> => {
      const list = await client.list<ConfigMap>(configMapType, {
        namespace: 'default',
        labelSelector: `${WORK_LABEL}=work`,
      });
      return new Map(
        list.items.flatMap((o) =>
          o.data?.doneBy === undefined ? [] : [[o.metadata.name ?? '', o.data.doneBy]],
        ),
      );
    };
    const stored = await pollFor(
      `every object done (${objects})`,
      async () => {
        if (doneKeys().size < objects - 64) return undefined;
        const done = await storedDone();
        return done.size >= objects ? done : undefined;
      },
      context,
    );
    const cpuAtDone = options.changes === undefined || options.changes.length === 0 ? cpu() : undefined;
    const entries = all();
    const keyed = entries.filter((e): e is KeyEntry => 'key' in e);
    const lastDone = Math.max(...keyed.filter((e) => e.kind === 'done').map((e) => e.at));
    const doneBy: Record<string, number> = {};
    for (const identity of stored.values()) doneBy[identity] = (doneBy[identity] ?? 0) + 1;
    // How long the keys a stopped or killed replica had under way waited for their next start elsewhere.
    const viewsOf = (list: readonly WorkerEntry[]) =>
      list
        .filter((e): e is Extract<WorkerEntry, { kind: 'view' }> => e.kind === 'view')
        .sort((a, b) => a.at - b.at);
    const convergedIn = (
      views: readonly Extract<WorkerEntry, { kind: 'view' }>[],
      c: ChangeReport,
    ): number | undefined => {
      const want = c.members.join(',');
      const latest = new Map<string, string>();
      for (const v of views) {
        const ok = v.members.join(',') === want && v.phase === 'member';
        latest.set(v.identity, ok ? 'ok' : 'no');
        if (v.at >= c.at && c.members.every((m) => latest.get(m) === 'ok')) return v.at - c.at;
      }
      return undefined;
    };
    // The objects may all be done before the group settled after the last change: wait for it.
    const last = changes.at(-1);
    if (last !== undefined) {
      await waitFor(
        `the group to settle after ${last.action} ${last.replica}`,
        () => (convergedIn(viewsOf(all()), last) === undefined ? undefined : true),
        context,
      );
    }
    const views = viewsOf(all());
    const converged = (c: ChangeReport): number | undefined => convergedIn(views, c);
    const withOwnerless = changes.map((c) => {
      if (c.action === 'add') return { ...c, convergedMs: converged(c) };
      const victimStarts = new Set(
        keyed.filter((e) => e.identity === c.replica && e.kind === 'start').map((e) => e.key),
      );
      const waits = [...victimStarts].flatMap((key) => {
        const next = keyed.find(
          (e) => e.key === key && e.identity !== c.replica && e.kind === 'start' && e.at > c.at,
        );
        return next === undefined ? [] : [next.at - c.at];
      });
      return {
        ...c,
        maxOwnerlessMs: waits.length === 0 ? undefined : Math.max(...waits),
        convergedMs: converged(c),
      };
    });
    const seconds = (lastDone - goAt) / 1000;
    const firstChange = changes[0]?.at ?? Number.POSITIVE_INFINITY;
    const cachedMin: Record<string, number> = {};
    for (const e of entries) {
      if (e.kind !== 'cached' || e.at < goAt || e.at >= firstChange) continue;
      cachedMin[e.identity] = Math.min(cachedMin[e.identity] ?? e.count, e.count);
    }
    return {
      replicas: count,
      objects,
      workMs,
      concurrency,
      seconds,
      perSecond: objects / seconds,
      doneBy,
      overlaps: overlappingKeys(keyed, exits),
      unfinished: objects - stored.size,
      refused: keyed.filter((e) => e.kind === 'refused').length,
      aborted: keyed.filter((e) => e.kind === 'end' && e.aborted === true).length,
      cachedMin,
      cpuSeconds:
        cpuAtGo === undefined || cpuAtDone === undefined
          ? undefined
          : { server: cpuAtDone.server - cpuAtGo.server, replicas: cpuAtDone.replicas - cpuAtGo.replicas },
      changes: withOwnerless,
    };
  } finally {
    for (const p of processes)
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
    await Promise.race([
      Promise.all(processes.map((p) => p.exited)),
      new Promise((r) => setTimeout(r, 10_000)),
    ]);
    for (const p of processes)
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await backend?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
