import { type ControllerKeyInfo, chainOf, type Fence, formatCause, type ShardGate } from '@converge/runtime';
import type { InstrumentableController } from '../controller-metrics.ts';
import { type ShardSource, shardGateOf, shardGroupOf } from '../shard-metrics.ts';

/** States `/debug/keys?state=` accepts (`hotloop`: keys flagged as hot loops, whatever their state). */
const STATES = new Set(['running', 'backoff', 'waiting', 'queued', 'hotloop']);

/** Keys listed per controller unless `?limit=` says otherwise (at most 10 000). */
const DEFAULT_LIMIT = 1_000;
const MAX_LIMIT = 10_000;

/** One key in the `/debug/keys` JSON. */
export interface DebugKey {
  readonly key: string;
  readonly partition: string;
  readonly state: ControllerKeyInfo<unknown>['state'];
  readonly priority: number;
  /** Failed attempts (rate-limited requeues) since it last succeeded. */
  readonly attempts: number;
  /** Why its next run will run, as short texts (`formatCause`). */
  readonly causes: readonly string[];
  readonly droppedCauses: number;
  /** Why the running reconcile runs, while running. */
  readonly runCauses?: readonly string[];
  readonly reconcileId?: string;
  readonly runningSince?: string;
  readonly runningForMs?: number;
  /** When it runs next, while it waits (in backoff or on a requeue-after). */
  readonly nextRetryAt?: string;
  readonly nextRetryInMs?: number;
  readonly lastError?: {
    readonly message: string;
    readonly name: string;
    readonly code?: string;
    readonly at?: string;
  };
  /** Added again while running: runs once more after this run. */
  readonly runsAgain: boolean;
  /**
   * Whether this replica's shard member may run the key now, for a sharded controller (absent for
   * one that is not): a key it may not run is dropped when it comes out of the queue.
   */
  readonly owned?: boolean;
  /**
   * The chain behind the newest of its causes (running or pending) that echoes a write of this
   * process, one line per link (`causeChain`); absent when none does.
   */
  readonly chain?: readonly string[];
  /** Set while the key is flagged as a hot loop: since when, self-caused runs counted, the chain. */
  readonly hotLoop?: {
    readonly since: string;
    readonly selfCausedRuns: number;
    readonly chain: readonly string[];
  };
}

/** A fence in the `/debug/keys` JSON: its name, holder and epoch. */
export interface DebugFence {
  readonly name: string;
  readonly holder: string;
  readonly epoch: number;
}

/** This replica's shard member in the `/debug/keys` JSON, when the manager shards. */
export interface DebugSharding {
  readonly group: string;
  readonly identity: string;
  /** `joining`, `member`, `releasing`, `lapsed`, `resetting`, `stopping` or `stopped`. */
  readonly phase: string;
  readonly epoch: number;
  /** The fence the member's writes carry: `<group>/<identity>` at its epoch. */
  readonly fence: DebugFence;
  /** The members it counts live (itself included once it claims keys), sorted. */
  readonly members: readonly string[];
  /** How the group splits keys: `key` (request keys) or `uid` (64 uid hash slots). */
  readonly by: 'key' | 'uid';
  /** Sharded by uid: the slots this member caches (owns over its claim or its view). */
  readonly slots?: readonly number[];
}

/** The `/debug/keys` JSON document. */
export interface DebugKeys {
  readonly now: string;
  /** This replica's shard member, when the manager shards. */
  readonly sharding?: DebugSharding;
  /** The manager's leader fence (the one its writes carry), while it leads. */
  readonly fence?: DebugFence;
  readonly controllers: readonly {
    readonly name: string;
    readonly keys: readonly DebugKey[];
    readonly truncated: boolean;
    /** Keys flagged as hot loops now (listed or not). */
    readonly hotLoopKeys: number;
  }[];
}

/** A request's problem: the status and text to answer with. */
export class BadQuery extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** Who owns what: the manager's shard member and leader fence, as `Metrics` knows them. */
export interface KeyOwnership {
  readonly sharding?: ShardSource | undefined;
  readonly fence?: Fence | undefined;
}

/**
 * The keys of the controllers (all, or `?controller=name`), at most `?limit=` each, of one
 * `?state=` if given; with a shard member, each key of a sharded controller says whether the
 * member may run it (`owned`), and `?owned=true|false` keeps only the keys that say so. Throws
 * {@link BadQuery} for an unknown controller (404) or a bad parameter (400).
 */
export function debugKeys(
  controllers: readonly InstrumentableController[],
  query: URLSearchParams,
  now: number,
  ownership: KeyOwnership = {},
): DebugKeys {
  for (const name of query.keys()) {
    if (name !== 'controller' && name !== 'limit' && name !== 'state' && name !== 'owned')
      throw new BadQuery(400, `unknown parameter ${JSON.stringify(name)}`);
  }
  const ownedText = query.getAll('owned');
  if (ownedText.length > 1 || (ownedText.length === 1 && ownedText[0] !== 'true' && ownedText[0] !== 'false'))
    throw new BadQuery(400, 'owned must be true or false');
  const owned = ownedText.length === 0 ? undefined : ownedText[0] === 'true';
  const wanted = query.getAll('controller');
  const limitText = query.get('limit');
  const limit = limitText === null ? DEFAULT_LIMIT : Number(limitText);
  if (
    query.getAll('limit').length > 1 ||
    !/^\d{1,5}$/.test(limitText ?? '0') ||
    !Number.isInteger(limit) ||
    limit < 1 ||
    limit > MAX_LIMIT
  ) {
    throw new BadQuery(400, `limit must be an integer from 1 to ${MAX_LIMIT}`);
  }
  const states = query.getAll('state');
  for (const state of states)
    if (!STATES.has(state)) throw new BadQuery(400, `state must be one of ${[...STATES].join(', ')}`);
  for (const name of wanted) {
    if (!controllers.some((c) => c.name === name))
      throw new BadQuery(404, `no controller named ${JSON.stringify(name)}`);
  }
  const chosen = wanted.length === 0 ? controllers : controllers.filter((c) => wanted.includes(c.name));
  const member = ownership.sharding;
  const fence = ownership.fence;
  return {
    now: iso(now),
    ...(member === undefined ? {} : { sharding: debugSharding(member) }),
    ...(fence === undefined ? {} : { fence: debugFence(fence) }),
    controllers: chosen.map((c) => {
      const gate = shardGateOf(c, member);
      const filtered = states.length > 0 || owned !== undefined;
      const all = c.inspect(filtered ? undefined : limit + 1);
      const hot = states.includes('hotloop');
      const ownedOf = (k: ControllerKeyInfo<unknown>): boolean | undefined => k.owned ?? gate?.mayRun(k.id);
      const matching = !filtered
        ? all
        : all.filter(
            (k) =>
              (states.length === 0 || states.includes(k.state) || (hot && k.hotLoop !== undefined)) &&
              (owned === undefined || ownedOf(k) === owned),
          );
      return {
        name: c.name,
        keys: matching.slice(0, limit).map((k) => debugKey(k, now, gate)),
        truncated: matching.length > limit,
        hotLoopKeys: c.hotLoopKeys?.() ?? all.filter((k) => k.hotLoop !== undefined).length,
      };
    }),
  };
}

function debugSharding(member: ShardSource): DebugSharding {
  return {
    group: shardGroupOf(member),
    identity: member.identity,
    phase: member.phase,
    epoch: member.epoch,
    fence: debugFence(member.fence),
    members: [...member.members].sort(),
    by: member.by ?? 'key',
    ...(member.by === 'uid' && member.slots !== undefined ? { slots: [...member.slots] } : {}),
  };
}

function debugFence(fence: Fence): DebugFence {
  return { name: fence.name, holder: fence.holder, epoch: fence.epoch };
}

function debugKey(k: ControllerKeyInfo<unknown>, now: number, gate: ShardGate | undefined): DebugKey {
  const error = k.lastError;
  const code = (error as { code?: unknown } | undefined)?.code;
  return {
    key: k.id,
    partition: k.partition,
    state: k.state,
    priority: k.priority,
    attempts: k.requeues,
    causes: k.causes.causes.map(formatCause),
    droppedCauses: k.causes.dropped,
    ...(k.runCauses === undefined ? {} : { runCauses: k.runCauses.causes.map(formatCause) }),
    ...(k.reconcileId === undefined ? {} : { reconcileId: k.reconcileId }),
    ...(k.processingSince === undefined
      ? {}
      : { runningSince: iso(k.processingSince), runningForMs: Math.max(0, now - k.processingSince) }),
    ...(k.waitingUntil === undefined
      ? {}
      : { nextRetryAt: iso(k.waitingUntil), nextRetryInMs: Math.max(0, k.waitingUntil - now) }),
    ...(error === undefined
      ? {}
      : {
          lastError: {
            message: error.message,
            name: error.name,
            ...(typeof code === 'string' ? { code } : {}),
            ...(k.lastErrorAt === undefined ? {} : { at: iso(k.lastErrorAt) }),
          },
        }),
    runsAgain: k.dirty,
    ...(gate === undefined ? {} : { owned: k.owned ?? gate.mayRun(k.id) }),
    ...chainField(k),
    ...(k.hotLoop === undefined
      ? {}
      : {
          hotLoop: {
            since: iso(k.hotLoop.since),
            selfCausedRuns: k.hotLoop.selfCausedRuns,
            chain: k.hotLoop.chain,
          },
        }),
  };
}

function chainField(k: ControllerKeyInfo<unknown>): { chain?: readonly string[] } {
  const chain = chainOf(
    k.runCauses === undefined ? k.causes.causes : [...k.runCauses.causes, ...k.causes.causes],
  );
  return chain === undefined ? {} : { chain };
}

function iso(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? String(ms) : date.toISOString();
}

/** A small HTML page of the same document (for a browser: `Accept: text/html`). */
export function debugKeysHtml(doc: DebugKeys): string {
  const rows = (keys: readonly DebugKey[]): string =>
    keys
      .map(
        (k) =>
          `<tr class="${k.state}${k.hotLoop === undefined ? '' : ' hotloop'}"><td>${esc(k.key)}</td><td>${k.state}${k.hotLoop === undefined ? '' : ' (hot loop)'}${k.owned === false ? ' (not owned)' : ''}</td><td>${k.attempts}</td><td>${esc(
            [...(k.runCauses ?? []), ...k.causes].join('; '),
          )}</td><td>${esc(k.lastError?.message ?? '')}</td><td>${esc(k.nextRetryAt ?? k.runningSince ?? '')}</td></tr>`,
      )
      .join('\n');
  const sections = doc.controllers
    .map(
      (c) =>
        `<h2>${esc(c.name)}</h2>\n<table><thead><tr><th>key</th><th>state</th><th>attempts</th><th>causes</th><th>last error</th><th>next retry / running since</th></tr></thead>\n<tbody>\n${rows(
          c.keys,
        )}\n</tbody></table>${c.truncated ? '<p>(more keys not shown: raise ?limit=)</p>' : ''}`,
    )
    .join('\n');
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Converge keys</title>
<style>body{font-family:system-ui,sans-serif;margin:1.5rem}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}tr.backoff{background:#fff3e0}tr.running{background:#e8f5e9}tr.hotloop{background:#ffebee}</style>
</head><body><h1>Keys</h1><p>As of ${esc(doc.now)}</p>
${ownershipHtml(doc)}${sections}
</body></html>
`;
}

function ownershipHtml(doc: DebugKeys): string {
  const s = doc.sharding;
  const lines = [
    s === undefined
      ? ''
      : `<p>Shard group ${esc(s.group)}: ${esc(s.identity)} is ${esc(s.phase)} at epoch ${s.epoch}; members ${esc(s.members.join(', ') || '(none)')}</p>\n`,
    doc.fence === undefined
      ? ''
      : `<p>Leading: fence ${esc(doc.fence.name)} at epoch ${doc.fence.epoch} (${esc(doc.fence.holder)})</p>\n`,
  ];
  return lines.join('');
}

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
