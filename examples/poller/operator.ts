/**
 * openclarity's mode, end to end, on something real outside Kubernetes: PostgreSQL roles and
 * databases, converged to the rows of two tables (`desired_roles`, `desired_databases`).
 *
 * As in openclarity's simple-controller-runtime: a Poller lists, at a fixed rate, every role and
 * database that is desired or was created here, and enqueues each one on every poll (`resync`).
 * One queue is shared by two reconcilers, a role one and a database one, run by two workers (as
 * several openclarity Reconcilers take from one queue); a request is never in two workers at once.
 * The queue is openclarity's: a delayed requeue holds its request, so polls in between do not run
 * it sooner (`hold`); an add while the request is processing is dropped, not remembered
 * (`coalesceWhileProcessing: false`); a failed reconcile is logged and not retried (`noRetries`):
 * the next poll runs it again. A database whose owner role does not exist yet waits with
 * `requeueAfter`.
 *
 * Only roles and databases carrying the instance's marker (a COMMENT naming the desired-state
 * schema) are altered or dropped; others are reported as conflicts and left alone. What each
 * reconcile found goes into the `status` table.
 */
import {
  type Clock,
  Controller,
  type ControllerOptions,
  enqueueFromMapFunction,
  fromEventSource,
  type Logger,
  type Manager,
  noRetries,
  Poller,
} from '@converge/runtime';
import { connectPostgres, type Database, DEFAULT_SCHEMA, ensureTables, table } from './postgres.ts';
import { type Request, reconcileDatabase, reconcileRole, reporting } from './reconcilers.ts';

export type { Request } from './reconcilers.ts';

/** Time between the starts of two polls, by default. */
export const POLL_INTERVAL_MS = 5_000;
/** How long a database waits for its owner role before it is tried again, by default. */
export const HOLD_MS = 15_000;

export interface PollerExampleOptions {
  readonly db: Database;
  /** Default {@link POLL_INTERVAL_MS}. */
  readonly intervalMs?: number;
  /** Default {@link HOLD_MS}. */
  readonly holdMs?: number;
  /** Workers taking from the one queue. Default 2. */
  readonly workers?: number;
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Called with every failed reconcile (the controller logs it and drops the request). */
  readonly onError?: ControllerOptions<Request>['onError'];
}

/** The identity of a request in the queue: `role/app`, `database/app`. */
export const requestKey = (request: Request): string => `${request.kind}/${request.name}`;

/** Every role and database that is desired or carries the marker (so removed ones get dropped). */
export async function listRequests(db: Database, signal?: AbortSignal): Promise<Request[]> {
  const query = db.sql<Request[]>`
    select 'role' as kind, name from ${table(db, 'desired_roles')}
    union select 'role', rolname::text from pg_roles
      where shobj_description(oid, 'pg_authid') = ${db.marker}
    union select 'database', name from ${table(db, 'desired_databases')}
    union select 'database', datname::text from pg_database
      where shobj_description(oid, 'pg_database') = ${db.marker}
    order by 1, 2`;
  const cancel = (): void => void query.cancel();
  signal?.addEventListener('abort', cancel, { once: true });
  try {
    return (await query).map(({ kind, name }) => ({ kind, name }));
  } finally {
    signal?.removeEventListener('abort', cancel);
  }
}

/** The Poller and the Controller (with its queue and two reconcilers), wired; neither is started. */
export function desiredStateController(options: PollerExampleOptions) {
  const { db, holdMs = HOLD_MS, clock, logger } = options;
  const poller = new Poller<Request>({
    name: 'desired-state',
    list: (signal) => listRequests(db, signal),
    keyOf: requestKey,
    intervalMs: options.intervalMs ?? POLL_INTERVAL_MS,
    jitterFactor: 0, // openclarity polls at a fixed period
    resync: true, // every listed item is enqueued on every poll, changed or not
    ...(clock === undefined ? {} : { clock }),
    ...(logger === undefined ? {} : { logger }),
  });
  const controller = new Controller<Request>({
    name: 'postgres-roles-and-databases',
    reconciler: (request, context) =>
      reporting(db, request, () =>
        request.kind === 'role'
          ? reconcileRole(db, request.name, context)
          : reconcileDatabase(db, request.name, holdMs, context),
      ),
    sources: [
      fromEventSource(
        poller,
        enqueueFromMapFunction((request: Request) => [request]),
      ),
    ],
    keyOf: requestKey,
    maxConcurrentReconciles: options.workers ?? 2,
    hold: true,
    coalesceWhileProcessing: false,
    retryPolicy: noRetries,
    ...(clock === undefined ? {} : { clock }),
    ...(logger === undefined ? {} : { logger }),
    ...(options.onError === undefined ? {} : { onError: options.onError }),
  });
  return { poller, controller };
}

/**
 * The operator module (`converge dev` runs it). PostgreSQL is `DATABASE_URL` or the `PG*`
 * variables (host default 127.0.0.1); the tables live in the schema `CONVERGE_POLLER_SCHEMA`
 * (default `converge_poller`), created if missing. Throws `PostgresUnreachableError` when nothing
 * answers. The pool closes after everything else stopped: the 'servers' group stops last.
 */
export default async function pollerExample(manager: Manager): Promise<void> {
  const db = await connectPostgres(process.env.CONVERGE_POLLER_SCHEMA || DEFAULT_SCHEMA);
  try {
    await ensureTables(db);
  } catch (error) {
    await db.sql.end({ timeout: 0 });
    throw error;
  }
  const closeOnStop = async (signal: AbortSignal) => {
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    await db.sql.end({ timeout: 5 });
  };
  manager.add(closeOnStop, { group: 'servers', name: 'poller-postgres' });
  const { controller } = desiredStateController({ db, clock: manager.clock, logger: manager.logger });
  manager.add(controller, { name: controller.name });
  manager.logger.info({ target: db.target, schema: db.schema }, 'Polling desired roles and databases');
}
