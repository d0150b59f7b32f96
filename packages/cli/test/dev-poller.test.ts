/**
 * `converge dev` and the bundled poller example: run when PostgreSQL answers (a role desired in its
 * table appears), left out with a clear message when it does not, the other examples running.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Database, table } from '../../../examples/poller/postgres.ts';
import { dropRun, postgresForTests, uniqueSuffix } from '../../../examples/poller/test-support.ts';
import { type ConvergeProcess, spawnConverge, waitFor } from './processes.ts';

const dirs: string[] = [];
const processes: ConvergeProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const p of processes.splice(0)) {
    if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await p.exited;
  }
  for (const cleanup of cleanups.splice(0)) await cleanup();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tmp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'converge-dev-poller-'));
  dirs.push(dir);
  return dir;
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address !== null ? address.port : 1;
}

/** Polls the database every 100 ms until `probe` returns a value; fails after 30 s. */
async function eventually<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('converge dev with the poller example', () => {
  it('runs it when PostgreSQL answers: a role inserted into its desired_roles table is created, and its status reads ready', async () => {
    const suffix = uniqueSuffix();
    const schema = `converge_poller_d${suffix}`;
    const db: Database = await postgresForTests(schema);
    cleanups.push(async () => {
      await dropRun(db, `cvg_${suffix}_`);
      await db.sql.end();
    });
    const port = await closedPort(); // no NATS: the kumori example stays out
    const env = { CONVERGE_POLLER_SCHEMA: schema, PGHOST: '127.0.0.1', NATS_URL: `nats://127.0.0.1:${port}` };
    const dev = spawnConverge(tmp(), ['dev', '--port', '0'], env);
    processes.push(dev);
    await waitFor(
      'the poller hint',
      () => (dev.output().includes('converge: then psql') ? true : undefined),
      dev.output,
    );
    expect(dev.output()).toMatch(/converge: running operator .*examples\/poller\/operator\.ts/);
    expect(dev.output()).toContain(
      `converge: try  psql -c "insert into ${schema}.desired_roles (name, can_login, connection_limit) values ('app', true, 5)"`,
    );
    expect(dev.output()).toContain(`converge: then psql -c "table ${schema}.status"`);

    const name = `cvg_${suffix}_dev`;
    await db.sql`insert into ${table(db, 'desired_roles')} values (${name}, true, 3)`;
    const role = await eventually('the role', async () => {
      const [row] = await db.sql<{ login: boolean; limit: number; comment: string }[]>`
        select rolcanlogin as login, rolconnlimit as limit, shobj_description(oid, 'pg_authid') as comment
        from pg_roles where rolname = ${name}`;
      return row;
    });
    expect(role).toEqual({ login: true, limit: 3, comment: db.marker });
    const status = await eventually('its status', async () => {
      const [row] = await db.sql<{ phase: string; message: string }[]>`
        select phase, message from ${table(db, 'status')} where kind = 'role' and name = ${name}`;
      return row;
    });
    expect(status).toEqual({ phase: 'ready', message: 'login, connection limit 3' });

    dev.child.kill('SIGINT');
    expect((await dev.exited).code).toBe(0);
  });

  it('says clearly when PostgreSQL does not answer, and runs the other examples', async () => {
    const port = await closedPort();
    const env = { PGHOST: '127.0.0.1', PGPORT: String(port), NATS_URL: `nats://127.0.0.1:${port}` };
    const dev = spawnConverge(tmp(), ['dev', '--port', '0'], env);
    processes.push(dev);
    await waitFor(
      'the other examples',
      () => (dev.output().includes('converge: try  kubectl') ? true : undefined),
      dev.output,
    );
    const [line] = dev.output().match(/^converge: example poller not started: .*$/m) ?? [];
    expect(line).toMatch(
      new RegExp(
        `^converge: example poller not started: PostgreSQL is not reachable at \\S+@127\\.0\\.0\\.1:${port}/\\S+ ` +
          `\\(connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\): start it, or set PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE or DATABASE_URL$`,
      ),
    );
    expect(dev.output()).not.toContain('psql');
    expect(dev.output()).toMatch(/running operator .*configmap-generator\/operator\.ts/);

    dev.child.kill('SIGINT');
    expect((await dev.exited).code).toBe(0);
  });
});
