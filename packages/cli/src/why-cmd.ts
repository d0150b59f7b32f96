/**
 * `converge why KIND/NAME`: asks a running operator's operations server (`/debug/keys?key=`) about
 * one object and prints, per controller holding its key, the state, causes, chain, attempts, last
 * error, next retry and hot loop; or that no controller holds it.
 */
import { OperatorUnreachableError } from './errors.ts';
import { OPERATIONS_RECORD, processAlive, readOperationsRecord } from './operations-record.ts';
import type { RunIo } from './process-io.ts';
import { isClusterScoped, kindWords, type WhyArgs } from './why-args.ts';
import { describeAnswer, oneLine } from './why-text.ts';

/** How long the operator has to answer. */
export const WHY_TIMEOUT_MS = 3_000;

/**
 * One key as `/debug/keys` has it (`DebugKey` of `@converge/metrics`), read defensively: fields a
 * newer server adds are kept in the JSON output and ignored here.
 */
export interface WhyKey {
  readonly key: string;
  readonly state: string;
  readonly attempts?: number;
  readonly causes?: readonly string[];
  readonly droppedCauses?: number;
  readonly runCauses?: readonly string[];
  readonly reconcileId?: string;
  readonly runningSince?: string;
  readonly runningForMs?: number;
  readonly nextRetryAt?: string;
  readonly nextRetryInMs?: number;
  readonly lastError?: {
    readonly message?: string;
    readonly name?: string;
    readonly code?: string;
    readonly at?: string;
  };
  readonly runsAgain?: boolean;
  /** The cause chain, nearest link first (servers with cause chains). */
  readonly chain?: readonly string[];
  /** Set while the key is flagged as a hot loop (servers with hot-loop detection). */
  readonly hotLoop?: {
    readonly since?: string | number;
    readonly selfCausedRuns?: number;
    readonly chain?: readonly string[];
  };
}

/** A controller holding the object's key. */
export interface WhyController {
  readonly controller: string;
  /**
   * Whether it is known to reconcile the kind asked about: its name is the kind or its plural (a
   * builder's default name), or its key names that resource (a dynamic controller's). False: a
   * controller named otherwise, which holds a key of the same namespace/name, of a kind unknown.
   */
  readonly matchesKind: boolean;
  /** The key, as `/debug/keys` has it. */
  readonly key: WhyKey;
}

/** What `converge why --json` prints. */
export interface WhyAnswer {
  /** The operations server asked. */
  readonly operator: string;
  /** The operator's time of the answer. */
  readonly now: string;
  readonly object: {
    readonly resource: string;
    readonly group?: string;
    readonly namespace: string;
    readonly name: string;
  };
  /** No controller known to reconcile that kind holds its key. */
  readonly idle: boolean;
  readonly keys: readonly WhyController[];
  /** Every controller of the operator. */
  readonly controllers: readonly string[];
}

/** Runs `converge why`; returns the exit code (errors are thrown: main prints them, exit 1). */
export async function runWhy(
  args: WhyArgs,
  io: RunIo,
  options: { readonly timeoutMs?: number; readonly cwd?: string } = {},
): Promise<number> {
  const operator = args.address ?? recordedAddress(options.cwd);
  const doc = await askOperator(operator, args, options.timeoutMs ?? WHY_TIMEOUT_MS);
  const answer = answerOf(operator, doc, args);
  if (args.json) io.out(JSON.stringify(answer, null, 2));
  else for (const line of describeAnswer(answer)) io.out(line);
  return 0;
}

/** The address `converge dev` or `run` recorded in the working directory. */
function recordedAddress(cwd: string | undefined): string {
  const record = readOperationsRecord(cwd);
  if (record === undefined)
    throw new OperatorUnreachableError(
      undefined,
      `no operator to ask: no ${OPERATIONS_RECORD} here (converge dev, and converge run with --metrics-bind-address, record their metrics address there while they run); start one in this directory, or pass --address URL (the metrics address it printed at its start)`,
    );
  if (!processAlive(record.pid))
    throw new OperatorUnreachableError(
      record.url,
      `the operator recorded in ${OPERATIONS_RECORD} (converge ${record.command}, pid ${record.pid}, at ${record.url}) is not running any more; start it again, or pass --address URL`,
    );
  return record.url;
}

interface Doc {
  readonly now: string;
  readonly controllers: readonly { readonly name: string; readonly keys: readonly WhyKey[] }[];
}

async function askOperator(operator: string, args: WhyArgs, timeoutMs: number): Promise<Doc> {
  const query = new URLSearchParams([
    ['key', `${args.namespace}/${args.name}`],
    ['key', args.name],
  ]);
  const url = `${operator}/debug/keys?${query}`;
  const hint =
    'start the operator (converge dev, or converge run --metrics-bind-address ADDRESS), or pass --address URL';
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(timeoutMs),
    });
    text = await response.text();
  } catch (error) {
    const e = error as { name?: string; cause?: { code?: string; message?: string } };
    const why =
      e.name === 'TimeoutError'
        ? `no answer within ${timeoutMs / 1000} s`
        : e.cause?.code === 'ECONNREFUSED'
          ? 'connection refused'
          : (e.cause?.code ?? e.cause?.message ?? String(error));
    throw new OperatorUnreachableError(operator, `no operator answers at ${operator} (${why}): ${hint}`, {
      cause: error,
    });
  }
  if (response.status === 400 && /unknown parameter "key"/.test(text))
    throw new OperatorUnreachableError(
      operator,
      `the operator at ${operator} serves a /debug/keys without ?key= (an older Converge): upgrade it, or read ${operator}/debug/keys`,
    );
  if (response.status !== 200)
    throw new OperatorUnreachableError(
      operator,
      `${operator}/debug/keys answered ${response.status}${response.status === 404 ? " (not found: is this the metrics address, not the health probes', and are metrics on?)" : ''}: ${oneLine(text, 200)}`,
    );
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    doc = undefined;
  }
  if (!isDoc(doc))
    throw new OperatorUnreachableError(
      operator,
      `${operator}/debug/keys did not answer with the keys document of a Converge operations server`,
    );
  return doc;
}

function isDoc(doc: unknown): doc is Doc {
  const d = doc as Partial<Doc> | null;
  return (
    typeof d === 'object' &&
    d !== null &&
    typeof d.now === 'string' &&
    Array.isArray(d.controllers) &&
    d.controllers.every(
      (c) =>
        typeof c === 'object' &&
        c !== null &&
        typeof c.name === 'string' &&
        Array.isArray(c.keys) &&
        c.keys.every(
          (k: Partial<WhyKey> | null) =>
            typeof k === 'object' && k !== null && typeof k.key === 'string' && typeof k.state === 'string',
        ),
    )
  );
}

/** A dynamic controller's key, `group/version/resource/namespace/name`. */
const DYNAMIC_KEY = /^([^/]*)\/([^/]+)\/([^/]+)\/([^/]*)\/([^/]+)$/;

function answerOf(operator: string, doc: Doc, args: WhyArgs): WhyAnswer {
  const words = kindWords(args.resource);
  const clusterScoped = isClusterScoped(args.resource);
  const keys: WhyController[] = [];
  for (const c of doc.controllers) {
    for (const key of c.keys) {
      const dynamic = DYNAMIC_KEY.exec(key.key);
      if (dynamic !== null) {
        // Of another kind (or group): another object, not shown.
        const [, group, , resource] = dynamic;
        if (words.has(resource as string) && (args.group === undefined || args.group === group))
          keys.push({ controller: c.name, matchesKind: true, key });
        continue;
      }
      // A controller named otherwise: shown if its key has the object's shape (namespace/name,
      // or name alone for a built-in cluster-scoped kind); another shape is another object.
      const matchesKind = words.has(c.name.toLowerCase());
      if (matchesKind || key.key.includes('/') !== clusterScoped)
        keys.push({ controller: c.name, matchesKind, key });
    }
  }
  keys.sort((a, b) => Number(b.matchesKind) - Number(a.matchesKind));
  return {
    operator,
    now: doc.now,
    object: {
      resource: args.resource,
      ...(args.group === undefined ? {} : { group: args.group }),
      namespace: args.namespace,
      name: args.name,
    },
    idle: !keys.some((k) => k.matchesKind),
    keys,
    controllers: doc.controllers.map((c) => c.name),
  };
}
