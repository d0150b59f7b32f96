/**
 * The real PostgreSQL for the poller example's tests and the CLI's `converge dev` test: a
 * connection that fails with a clear message when no server answers (these tests never skip),
 * unique names per run, and a cleanup that drops what a run made.
 */
import { randomBytes } from 'node:crypto';
import { connectPostgres, type Database, ddl } from './postgres.ts';

/** Where to look when no PostgreSQL answers. */
const HOW_TO_START =
  'these tests run the example against a real PostgreSQL (machines of this project start one before ' +
  'the session; start it again with `pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main ' +
  'start`, or point PGHOST/PGPORT/PGUSER/PGDATABASE or DATABASE_URL at another)';

/** A fresh suffix for a run's schema and object names (`a1b2c3d4`). */
export function uniqueSuffix(): string {
  return randomBytes(4).toString('hex');
}

/** Connects as the example does, or fails saying how to get a PostgreSQL. */
export async function postgresForTests(schema: string): Promise<Database> {
  try {
    return await connectPostgres(schema);
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}; ${HOW_TO_START}`, {
      cause: error,
    });
  }
}

/**
 * Drops what a run made: its schema (with anything a test put into it), then every database and
 * role that carries the run's marker or whose name starts with `prefix` (those made by hand).
 */
export async function dropRun(db: Database, prefix: string): Promise<void> {
  const { sql, marker } = db;
  await ddl(sql, 'drop schema if exists %I cascade', db.schema);
  const like = `${prefix.replaceAll('_', '\\_')}%`;
  const databases = await sql<{ name: string }[]>`
    select datname::text as name from pg_database
    where datname like ${like} or shobj_description(oid, 'pg_database') = ${marker}`;
  for (const { name } of databases) await ddl(sql, 'drop database if exists %I', name);
  const roles = await sql<{ name: string }[]>`
    select rolname::text as name from pg_roles
    where rolname like ${like} or shobj_description(oid, 'pg_authid') = ${marker}`;
  for (const { name } of roles) await ddl(sql, 'drop role if exists %I', name);
}
