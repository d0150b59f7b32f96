/**
 * The two reconcilers of the poller example: one converges a PostgreSQL role to its row of
 * `desired_roles`, the other a database to its row of `desired_databases`. Each touches only
 * objects whose COMMENT is the instance's marker, and reports what it found into `status`.
 */
import { done, type ReconcileContext, type Result, requeueAfter } from '@converge/runtime';
import { type Database, ddl, table } from './postgres.ts';

/** What the queue holds: a role or a database, by name. */
export interface Request {
  readonly kind: 'role' | 'database';
  readonly name: string;
}

/** The phases a status row can be in. */
export type Phase = 'ready' | 'waiting' | 'conflict' | 'error';

/** Upserts the status row of `request`, counting reconciles. */
async function report(db: Database, request: Request, phase: Phase, message: string): Promise<void> {
  const { kind, name } = request;
  await db.sql`insert into ${table(db, 'status')} (kind, name, phase, message)
    values (${kind}, ${name}, ${phase}, ${message})
    on conflict (kind, name) do update set phase = excluded.phase, message = excluded.message,
      reconciles = status.reconciles + 1, updated_at = now()`;
}

async function forget(db: Database, { kind, name }: Request): Promise<void> {
  await db.sql`delete from ${table(db, 'status')} where kind = ${kind} and name = ${name}`;
}

/** Reports an error into `status` before it reaches the controller (which logs it; no retry). */
export async function reporting(
  db: Database,
  request: Request,
  reconcile: () => Promise<Result>,
): Promise<Result> {
  try {
    return await reconcile();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    await report(db, request, 'error', message).catch(() => {});
    throw error;
  }
}

/** Creates, alters or drops the role `name` so it matches its row (none: dropped, if ours). */
export async function reconcileRole(db: Database, name: string, { logger }: ReconcileContext) {
  const request: Request = { kind: 'role', name };
  const [want] = await db.sql<{ can_login: boolean; connection_limit: number }[]>`
    select can_login, connection_limit from ${table(db, 'desired_roles')} where name = ${name}`;
  const [have] = await db.sql<{ can_login: boolean; connection_limit: number; comment: string | null }[]>`
    select rolcanlogin as can_login, rolconnlimit as connection_limit,
      shobj_description(oid, 'pg_authid') as comment
    from pg_roles where rolname = ${name}`;
  if (want === undefined) {
    if (have?.comment === db.marker) {
      await ddl(db.sql, 'drop role %I', name);
      logger.info({}, 'Dropped role');
    }
    await forget(db, request);
    return done();
  }
  if (have !== undefined && have.comment !== db.marker) {
    await report(db, request, 'conflict', `role ${name} exists and was not created here: left alone`);
    return done();
  }
  const login = want.can_login ? 'login' : 'nologin';
  const limit = String(want.connection_limit);
  if (have === undefined) {
    await db.sql.begin(async (tx) => {
      await ddl(tx, 'create role %I with %s connection limit %s', name, login, limit);
      await ddl(tx, 'comment on role %I is %L', name, db.marker);
    });
    logger.info({}, 'Created role');
  } else if (have.can_login !== want.can_login || have.connection_limit !== want.connection_limit) {
    await ddl(db.sql, 'alter role %I with %s connection limit %s', name, login, limit);
    logger.info({}, 'Altered role');
  }
  await report(db, request, 'ready', `${login}, connection limit ${limit}`);
  return done();
}

/**
 * Creates, re-owns or drops the database `name` so it matches its row. While its owner role does
 * not exist it waits `holdMs` (a held requeueAfter: the polls in between do not run it sooner).
 */
export async function reconcileDatabase(
  db: Database,
  name: string,
  holdMs: number,
  { logger }: ReconcileContext,
) {
  const request: Request = { kind: 'database', name };
  const [want] = await db.sql<{ owner: string }[]>`
    select owner from ${table(db, 'desired_databases')} where name = ${name}`;
  const [have] = await db.sql<{ owner: string; comment: string | null }[]>`
    select pg_get_userbyid(datdba)::text as owner, shobj_description(oid, 'pg_database') as comment
    from pg_database where datname = ${name}`;
  if (want === undefined) {
    if (have?.comment === db.marker) {
      await ddl(db.sql, 'drop database %I', name);
      logger.info({}, 'Dropped database');
    }
    await forget(db, request);
    return done();
  }
  if (have !== undefined && have.comment !== db.marker) {
    await report(db, request, 'conflict', `database ${name} exists and was not created here: left alone`);
    return done();
  }
  const [owner] = await db.sql`select 1 from pg_roles where rolname = ${want.owner}`;
  if (owner === undefined) {
    await report(db, request, 'waiting', `waiting for its owner role ${want.owner}`);
    return requeueAfter(holdMs);
  }
  if (have === undefined) {
    // CREATE DATABASE cannot run in a transaction: the comment follows at once.
    await ddl(db.sql, 'create database %I owner %I', name, want.owner);
    await ddl(db.sql, 'comment on database %I is %L', name, db.marker);
    logger.info({}, 'Created database');
  } else if (have.owner !== want.owner) {
    await ddl(db.sql, 'alter database %I owner to %I', name, want.owner);
    logger.info({}, 'Changed database owner');
  }
  await report(db, request, 'ready', `owned by ${want.owner}`);
  return done();
}
