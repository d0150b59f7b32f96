import type { ControllerKeyInfo } from '@converge/runtime';
import type { InstrumentableController } from '../controller-metrics.ts';
import type { Metrics } from '../metrics.ts';
import { Names } from '../names.ts';
import { shardGroupOf } from '../shard-metrics.ts';
import { BadQuery, type DebugKey, debugKeys } from './debug-keys.ts';

/** States `/debug/events?state=` accepts: those of `/debug/keys`, and `hotloop`. */
const STATES = new Set(['running', 'backoff', 'waiting', 'queued', 'hotloop']);
/** Keys sent per controller per snapshot unless `?limit=` says otherwise, and the most it may say. */
export const DASHBOARD_DEFAULT_LIMIT = 50;
export const DASHBOARD_MAX_LIMIT = 500;
const MAX_OFFSET = 10_000_000;
/** Texts longer than this (an error message, a cause) are cut, so that a snapshot stays small. */
const MAX_TEXT = 1_000;

/** What one dashboard stream shows: the page of keys of each controller it asked for. */
export interface DashboardQuery {
  readonly controllers: readonly string[];
  readonly states: readonly string[];
  readonly limit: number;
  readonly offset: number;
}

/** A key as the dashboard gets it: `/debug/keys`'s, with the runtime's optional hot-loop fields. */
export type DashboardKey = DebugKey & {
  readonly chain?: readonly string[];
  readonly hotLoop?: {
    readonly since: string;
    readonly selfCausedRuns: number;
    readonly chain: readonly string[];
  };
};

/** One controller in a snapshot. */
export interface DashboardController {
  readonly name: string;
  readonly maxConcurrentReconciles: number;
  readonly queue: {
    /** Queued (ready) keys, all priorities. */
    readonly depth: number;
    readonly depthByPriority: readonly { readonly priority: number; readonly size: number }[];
    readonly longestRunningMs: number;
    readonly unfinishedWorkMs: number;
    /** Running and waiting (backoff or requeue-after) keys, when the controller tells (`stats()`). */
    readonly running?: number;
    readonly waiting?: number;
  };
  readonly reconciles: {
    readonly total: number;
    readonly errors: number;
    /** Per second since the previous snapshot of this stream (0 in the first). */
    readonly perSecond: number;
    readonly errorsPerSecond: number;
    /** Mean and 95th percentile (a bucket's upper bound) of the reconciles since the previous snapshot. */
    readonly meanMs?: number;
    readonly p95Ms?: number;
  };
  /** Per kind (group/version/resource), for controllers of several kinds. */
  readonly kinds?: readonly { readonly kind: string; readonly total: number; readonly perSecond: number }[];
  readonly hotLoopKeys?: number;
  /** At most `limit` keys, from `offset` in `/debug/keys`'s order, of the states asked for. */
  readonly keys: readonly DashboardKey[];
  readonly offset: number;
  readonly limit: number;
  /** More keys after this page. */
  readonly truncated: boolean;
}

/** One `snapshot` event of `/debug/events`. */
export interface DashboardSnapshot {
  readonly now: string;
  readonly leadership: readonly { readonly name: string; readonly leading: boolean }[];
  /** This replica's shard member, when the manager shards (as in `/debug/keys`, without the fence). */
  readonly sharding?: {
    readonly group: string;
    readonly identity: string;
    readonly phase: string;
    readonly epoch: number;
    readonly members: readonly string[];
  };
  readonly controllers: readonly DashboardController[];
}

/** Counter readings a stream keeps between two snapshots, to turn counters into rates. */
export interface CounterSample {
  readonly at: number;
  readonly values: ReadonlyMap<string, number>;
}

/** Parses `/debug/events`'s query. Throws {@link BadQuery} (400, or 404 for an unknown controller). */
export function dashboardQuery(
  query: URLSearchParams,
  controllers: readonly InstrumentableController[],
): DashboardQuery {
  for (const name of query.keys()) {
    if (!['controller', 'state', 'limit', 'offset'].includes(name))
      throw new BadQuery(
        400,
        `unknown parameter ${JSON.stringify(name)}: /debug/events takes controller, state, limit and offset`,
      );
  }
  const number = (name: string, fallback: number, min: number, max: number): number => {
    const all = query.getAll(name);
    if (all.length === 0) return fallback;
    const text = all[0] as string;
    if (all.length > 1 || !/^\d{1,8}$/.test(text) || Number(text) < min || Number(text) > max)
      throw new BadQuery(400, `${name} must be one integer from ${min} to ${max}`);
    return Number(text);
  };
  const limit = number('limit', DASHBOARD_DEFAULT_LIMIT, 1, DASHBOARD_MAX_LIMIT);
  const offset = number('offset', 0, 0, MAX_OFFSET);
  const states = query.getAll('state');
  for (const state of states)
    if (!STATES.has(state)) throw new BadQuery(400, `state must be one of ${[...STATES].join(', ')}`);
  const wanted = query.getAll('controller');
  for (const name of wanted)
    if (!controllers.some((c) => c.name === name))
      throw new BadQuery(404, `no controller named ${JSON.stringify(name)}`);
  return { controllers: wanted, states, limit, offset };
}

/**
 * The snapshot of the controllers `query` names, with rates since `previous` (undefined: the
 * first). Returns the snapshot and the sample to pass next time. Keys come through `debugKeys`
 * (the same document as `/debug/keys`), a page of them per controller: never more than `limit`.
 */
export async function dashboardSnapshot(
  metrics: Metrics | undefined,
  leading: boolean | undefined,
  query: DashboardQuery,
  now: number,
  previous: CounterSample | undefined,
): Promise<{ snapshot: DashboardSnapshot; sample: CounterSample }> {
  const all = metrics?.controllers() ?? [];
  const chosen = query.controllers.length === 0 ? all : all.filter((c) => query.controllers.includes(c.name));
  const values = metrics === undefined ? new Map<string, number>() : await readCounters(metrics);
  const sample: CounterSample = { at: now, values };
  const seconds = previous === undefined ? 0 : Math.max(0.001, (now - previous.at) / 1000);
  const delta = (key: string): number =>
    previous === undefined ? 0 : Math.max(0, (values.get(key) ?? 0) - (previous.values.get(key) ?? 0));
  const rate = (key: string): number => (seconds === 0 ? 0 : round(delta(key) / seconds));
  const pages = chosen.map((c) => paged(c, query));
  const member = metrics?.shardMember();
  const keys = debugKeys(
    pages.map((p) => p.controller),
    new URLSearchParams({ limit: String(query.limit) }),
    now,
    { sharding: member },
  );
  const controllers = chosen.map((c, i): DashboardController => {
    const gauges = c.queueGauges();
    const stats = statsOf(c);
    const page = keys.controllers[i] as (typeof keys.controllers)[number] & { hotLoopKeys?: unknown };
    const n = c.name;
    const total = sum(values, `${Names.reconcileTotal}|${n}|`);
    const count = delta(`${Names.reconcileTime}_count|${n}`);
    const kinds = kindsOf(values, n, rate);
    return {
      name: n,
      maxConcurrentReconciles: c.maxConcurrentReconciles,
      queue: {
        depth: gauges.depthByPriority.reduce((s, l) => s + l.size, 0),
        depthByPriority: gauges.depthByPriority,
        longestRunningMs: gauges.longestRunningMs,
        unfinishedWorkMs: gauges.unfinishedWorkMs,
        ...(stats === undefined ? {} : { running: stats.processing, waiting: stats.waiting }),
      },
      reconciles: {
        total,
        errors: values.get(`${Names.reconcileErrors}|${n}`) ?? 0,
        perSecond:
          previous === undefined
            ? 0
            : round(Math.max(0, total - sum(previous.values, `${Names.reconcileTotal}|${n}|`)) / seconds),
        errorsPerSecond: rate(`${Names.reconcileErrors}|${n}`),
        ...(count === 0
          ? {}
          : {
              meanMs: round((delta(`${Names.reconcileTime}_sum|${n}`) * 1000) / count),
              ...optional('p95Ms', p95(values, previous?.values, n, count)),
            }),
      },
      ...(kinds.length === 0 ? {} : { kinds }),
      ...(typeof page.hotLoopKeys === 'number' ? { hotLoopKeys: page.hotLoopKeys } : {}),
      keys: page.keys.map((k, j) => bounded(withHotLoop(k, pages[i]?.inspected[j]))),
      offset: query.offset,
      limit: query.limit,
      truncated: page.truncated,
    };
  });
  return {
    snapshot: {
      now: new Date(now).toISOString(),
      leadership: await leadershipOf(metrics, leading),
      ...(member === undefined
        ? {}
        : {
            sharding: {
              group: shardGroupOf(member),
              identity: member.identity,
              phase: member.phase,
              epoch: member.epoch,
              members: [...member.members].sort(),
            },
          }),
      controllers,
    },
    sample,
  };
}

/**
 * The controller as `debugKeys` should see it: its `inspect` returns the page `query` asks for
 * (filtered by state, from `offset`); everything else is the controller's own.
 */
function paged(
  c: InstrumentableController,
  query: DashboardQuery,
): { controller: InstrumentableController; inspected: ControllerKeyInfo<unknown>[] } {
  const out = { controller: c, inspected: [] as ControllerKeyInfo<unknown>[] };
  const inspect = (limit?: number): ControllerKeyInfo<unknown>[] => {
    const want = limit ?? query.limit + 1;
    out.inspected =
      query.states.length === 0
        ? c.inspect(query.offset + want).slice(query.offset)
        : c
            .inspect()
            .filter((k) => query.states.some((s) => matches(k, s)))
            .slice(query.offset, query.offset + want);
    return out.inspected;
  };
  out.controller = new Proxy(c, {
    get(target, property) {
      if (property === 'inspect') return inspect;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return out;
}

/** The key's hot-loop mark, from the controller's own info when `/debug/keys` does not carry it yet. */
function withHotLoop(k: DebugKey, info: ControllerKeyInfo<unknown> | undefined): DebugKey {
  const mark = (
    info as { hotLoop?: { since?: unknown; selfCausedRuns?: unknown; chain?: unknown } } | undefined
  )?.hotLoop;
  if ('hotLoop' in k || mark === undefined || info?.id !== k.key) return k;
  return {
    ...k,
    hotLoop: {
      since: typeof mark.since === 'number' ? new Date(mark.since).toISOString() : String(mark.since),
      selfCausedRuns: typeof mark.selfCausedRuns === 'number' ? mark.selfCausedRuns : 0,
      chain: Array.isArray(mark.chain) ? mark.chain.map(String) : [],
    },
  } as DebugKey;
}

function matches(k: ControllerKeyInfo<unknown>, state: string): boolean {
  return state === 'hotloop' ? (k as { hotLoop?: unknown }).hotLoop !== undefined : k.state === state;
}

function statsOf(c: InstrumentableController): { processing: number; waiting: number } | undefined {
  const stats = (c as { stats?: () => { processing?: unknown; waiting?: unknown } }).stats;
  if (typeof stats !== 'function') return undefined;
  const s = stats.call(c);
  return typeof s.processing === 'number' && typeof s.waiting === 'number'
    ? { processing: s.processing, waiting: s.waiting }
    : undefined;
}

/** Every string of a key cut to {@link MAX_TEXT} characters. */
function bounded(k: DebugKey): DashboardKey {
  return cut(k) as DashboardKey;
}

function cut(value: unknown): unknown {
  if (typeof value === 'string')
    return value.length > MAX_TEXT ? `${value.slice(0, MAX_TEXT)}… (${value.length} characters)` : value;
  if (Array.isArray(value)) return value.slice(0, 50).map(cut);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cut(v)]));
  return value;
}

/**
 * The counters the dashboard turns into rates, by `name|label|label…`: reconciles by controller
 * and result, errors, the reconcile time histogram's sum, count and buckets, per-kind reconciles.
 */
async function readCounters(metrics: Metrics): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const read = async (name: string, labels: readonly string[]): Promise<void> => {
    const metric = metrics.registry.getSingleMetric(name);
    if (metric === undefined) return;
    const { values } = await metric.get();
    for (const v of values) {
      const l = v.labels as Record<string, string | number | undefined>;
      const parts = labels.filter((n) => l[n] !== undefined).map((n) => String(l[n]));
      const key = [(v as { metricName?: string }).metricName ?? name, ...parts].join('|');
      out.set(key, (out.get(key) ?? 0) + v.value);
    }
  };
  await read(Names.reconcileTotal, ['controller', 'result']);
  await read(Names.reconcileErrors, ['controller']);
  await read(Names.reconcileTime, ['controller', 'le']);
  await read(Names.kindReconcileTotal, ['controller', 'kind']);
  return out;
}

function sum(values: ReadonlyMap<string, number>, prefix: string): number {
  let total = 0;
  for (const [key, value] of values) if (key.startsWith(prefix)) total += value;
  return total;
}

function kindsOf(
  values: ReadonlyMap<string, number>,
  controller: string,
  rate: (key: string) => number,
): { kind: string; total: number; perSecond: number }[] {
  const prefix = `${Names.kindReconcileTotal}|${controller}|`;
  const kinds: { kind: string; total: number; perSecond: number }[] = [];
  for (const [key, total] of values)
    if (key.startsWith(prefix)) kinds.push({ kind: key.slice(prefix.length), total, perSecond: rate(key) });
  return kinds.sort((a, b) => (a.kind < b.kind ? -1 : 1));
}

/** The upper bound (ms) of the bucket holding the 95th percentile of the reconciles between two samples. */
function p95(
  values: ReadonlyMap<string, number>,
  previous: ReadonlyMap<string, number> | undefined,
  controller: string,
  count: number,
): number | undefined {
  const prefix = `${Names.reconcileTime}_bucket|${controller}|`;
  const buckets: { le: number; n: number }[] = [];
  for (const [key, value] of values) {
    if (!key.startsWith(prefix)) continue;
    const le = key.slice(prefix.length);
    const n = value - (previous?.get(key) ?? 0);
    buckets.push({ le: le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le), n });
  }
  buckets.sort((a, b) => a.le - b.le);
  const found = buckets.find((b) => b.n >= 0.95 * count);
  return found === undefined || !Number.isFinite(found.le) ? undefined : round(found.le * 1000);
}

async function leadershipOf(
  metrics: Metrics | undefined,
  leading: boolean | undefined,
): Promise<{ name: string; leading: boolean }[]> {
  const metric = metrics?.registry.getSingleMetric(Names.leaderStatus);
  const out: { name: string; leading: boolean }[] = [];
  if (metric !== undefined)
    for (const v of (await metric.get()).values)
      out.push({ name: String((v.labels as { name?: unknown }).name ?? ''), leading: v.value === 1 });
  if (out.length === 0 && leading !== undefined) out.push({ name: 'manager', leading });
  return out;
}

function optional<K extends string>(name: K, value: number | undefined): { [P in K]?: number } {
  return value === undefined ? {} : ({ [name]: value } as { [P in K]?: number });
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
