/**
 * The poller example's PostgreSQL side: a connection configured from the environment (as psql
 * reads it), the tables of desired state and status, and DDL quoted by PostgreSQL's own format().
 */
import postgres from 'postgres';

export type Sql = postgres.Sql;

/** The schema of the desired-state tables unless `CONVERGE_POLLER_SCHEMA` names another. */
export const DEFAULT_SCHEMA = 'converge_poller';

/** PostgreSQL did not answer, or refused the connection; the message says what to set. */
export class PostgresUnreachableError extends Error {
  /** `user@host:port/database`, never the password. */
  readonly target: string;

  constructor(target: string, options: ErrorOptions & { cause: unknown }) {
    const reason = options.cause instanceof Error ? options.cause.message : String(options.cause);
    const hint = 'start it, or set PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE or DATABASE_URL';
    super(`PostgreSQL is not reachable at ${target} (${reason}): ${hint}`, options);
    this.name = 'PostgresUnreachableError';
    this.target = target;
  }
}

/** One connection pool and the place this instance keeps its desired state. */
export interface Database {
  readonly sql: Sql;
  readonly schema: string;
  /**
   * The COMMENT on every role and database this instance created; it touches no other. It names
   * the desired-state schema, so two instances (or a test run) never take each other's objects.
   */
  readonly marker: string;
  /** `user@host:port/database`. */
  readonly target: string;
}

/**
 * Connects with `DATABASE_URL`, or else `PGHOST` (default 127.0.0.1), `PGPORT`, `PGUSER`,
 * `PGPASSWORD` and `PGDATABASE` with libpq's defaults, and checks that the server answers within
 * `connectTimeoutS`. Throws {@link PostgresUnreachableError} when it does not.
 */
export async function connectPostgres(schema: string, connectTimeoutS = 3): Promise<Database> {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new Error(`schema ${JSON.stringify(schema)}: use lowercase letters, digits and _`);
  }
  const common = { max: 4, connect_timeout: connectTimeoutS, onnotice: () => {} };
  const url = process.env.DATABASE_URL;
  const sql =
    url === undefined || url === ''
      ? postgres({ ...common, host: process.env.PGHOST || '127.0.0.1' })
      : postgres(url, common);
  const { host, port, user, database } = sql.options;
  const target = `${user}@${host.join(',')}:${port.join(',')}/${database}`;
  try {
    await sql`select 1`;
  } catch (error) {
    await sql.end({ timeout: 0 });
    throw new PostgresUnreachableError(target, { cause: error });
  }
  return { sql, schema, marker: `converge examples/poller ${database}.${schema}`, target };
}

/** A schema-qualified table of the desired state, as an identifier fragment. */
export function table(db: Database, name: 'desired_roles' | 'desired_databases' | 'status') {
  return db.sql(`${db.schema}.${name}`);
}

/**
 * Creates the schema and its tables if they do not exist: `desired_roles(name, can_login,
 * connection_limit)`, `desired_databases(name, owner)` and `status(kind, name, phase, message,
 * reconciles, updated_at)`. An advisory lock keeps concurrent starts from racing.
 */
export async function ensureTables(db: Database): Promise<void> {
  await db.sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext(${db.marker}))`;
    await tx`create schema if not exists ${tx(db.schema)}`;
    await tx`create table if not exists ${table(db, 'desired_roles')} (
      name text primary key check (length(name) between 1 and 63),
      can_login boolean not null default false,
      connection_limit integer not null default -1 check (connection_limit >= -1))`;
    await tx`create table if not exists ${table(db, 'desired_databases')} (
      name text primary key check (length(name) between 1 and 63),
      owner text not null)`;
    await tx`create table if not exists ${table(db, 'status')} (
      kind text not null,
      name text not null,
      phase text not null,
      message text not null,
      reconciles integer not null default 1,
      updated_at timestamptz not null default now(),
      primary key (kind, name))`;
  });
}

/**
 * Runs one DDL statement built by PostgreSQL's `format()`: `%I` quotes an identifier, `%L` a
 * literal, `%s` inserts a keyword of ours. (DDL takes no bind parameters.)
 */
export async function ddl(sql: postgres.ISql, template: string, ...args: string[]): Promise<void> {
  const [row] = await sql<{ statement: string }[]>`
    select format(${template}, variadic ${args}::text[]) as statement`;
  if (row === undefined) throw new Error(`format(${template}) returned no row`);
  await sql.unsafe(row.statement);
}
