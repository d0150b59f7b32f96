/**
 * The poller example against the real PostgreSQL: the Poller lists the desired state, one queue
 * feeds the role and database reconcilers, and roles and databases appear, change and go. Time
 * (polls, held requeues) runs on a virtual clock, so the test says when each poll happens; the
 * database work is real, and the test waits for its effects with a bounded loop.
 */
import type { Controller, Poller } from '@converge/runtime';
import { VirtualClock } from '@converge/runtime/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { desiredStateController, type Request, requestKey } from './operator.ts';
import { connectPostgres, type Database, ensureTables, PostgresUnreachableError, table } from './postgres.ts';
import type { Phase } from './reconcilers.ts';
import { dropRun, postgresForTests, uniqueSuffix } from './test-support.ts';

const INTERVAL_MS = 1_000;
/** A database waiting for its owner is held through three polls, and runs before the fourth. */
const HOLD_MS = 3_500;

/** Polls `probe` every 20 ms until it returns a value other than undefined; fails after 20 s. */
async function eventually<T>(what: string, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface Run {
  /** The controller's pool; `admin` is the test's own, so a lock held by the test never starves it. */
  readonly db: Database;
  readonly admin: Database;
  readonly clock: VirtualClock;
  readonly poller: Poller<Request>;
  readonly controller: Controller<Request>;
  /** Failed reconciles per request key. */
  readonly errors: Map<string, number>;
  /** Names of this run: `cvg_<suffix>_<name>`. */
  name(name: string): string;
  stop(): Promise<void>;
}

let run: Run | undefined;

/**
 * A schema of its own with an anchor role already desired (so every poll lists something and
 * emits at least one event: that is how the test knows a poll has finished), the controller
 * started on a virtual clock, its first poll done and reconciled.
 */
async function startRun(): Promise<Run> {
  const suffix = uniqueSuffix();
  const schema = `converge_poller_t${suffix}`;
  const prefix = `cvg_${suffix}_`;
  const db = await postgresForTests(schema);
  const admin = await postgresForTests(schema);
  await ensureTables(admin);
  await admin.sql`insert into ${table(admin, 'desired_roles')} (name) values (${`${prefix}anchor`})`;
  const clock = new VirtualClock();
  const errors = new Map<string, number>();
  const onError = (_: Error, request: Request) => {
    errors.set(requestKey(request), (errors.get(requestKey(request)) ?? 0) + 1);
  };
  const options = { db, clock, intervalMs: INTERVAL_MS, holdMs: HOLD_MS, onError };
  const { poller, controller } = desiredStateController(options);
  const stop = new AbortController();
  const started = controller.start(stop.signal);
  const r: Run = {
    db,
    admin,
    clock,
    poller,
    controller,
    errors,
    name: (name) => `${prefix}${name}`,
    async stop() {
      stop.abort();
      await started;
      await db.sql.end();
      await dropRun(admin, prefix);
      await admin.sql.end();
    },
  };
  run = r;
  await eventually(
    'the first poll reconciled',
    () => (controller.state === 'running' && idle(r)) || undefined,
  );
  return r;
}

/** Nothing queued, nothing processing (held requests may wait on their timers). */
function idle({ controller }: Run): boolean {
  const { depth, processing, running } = controller.stats();
  return depth === 0 && processing === 0 && running === 0;
}

/** Moves the clock to the next poll, waits until it has listed and everything it queued has run. */
async function poll(r: Run): Promise<void> {
  const events = r.poller.stats().events;
  await r.clock.advance(INTERVAL_MS);
  await eventually(
    'a poll and its reconciles',
    () => (r.poller.stats().events > events && idle(r)) || undefined,
  );
}

async function role(r: Run, name: string) {
  const [row] = await r.admin.sql<{ canLogin: boolean; limit: number; comment: string | null }[]>`
    select rolcanlogin as "canLogin", rolconnlimit as "limit", shobj_description(oid, 'pg_authid') as comment
    from pg_roles where rolname = ${name}`;
  return row;
}

async function database(r: Run, name: string) {
  const [row] = await r.admin.sql<{ owner: string; comment: string | null }[]>`
    select pg_get_userbyid(datdba)::text as owner, shobj_description(oid, 'pg_database') as comment
    from pg_database where datname = ${name}`;
  return row;
}

async function status(r: Run, kind: Request['kind'], name: string) {
  const [row] = await r.admin.sql<{ phase: Phase; message: string; reconciles: number }[]>`
    select phase, message, reconciles from ${table(r.admin, 'status')} where kind = ${kind} and name = ${name}`;
  return row;
}

async function desireRole(r: Run, name: string, canLogin = false, limit = -1): Promise<void> {
  await r.admin.sql`insert into ${table(r.admin, 'desired_roles')} values (${name}, ${canLogin}, ${limit})
    on conflict (name) do update set can_login = excluded.can_login, connection_limit = excluded.connection_limit`;
}

async function desireDatabase(r: Run, name: string, owner: string): Promise<void> {
  await r.admin.sql`insert into ${table(r.admin, 'desired_databases')} values (${name}, ${owner})
    on conflict (name) do update set owner = excluded.owner`;
}

/** Polls (at most `polls` times) until `probe` holds; some steps need a second poll by design. */
async function pollUntil(r: Run, what: string, probe: () => Promise<boolean>, polls = 3): Promise<void> {
  for (let i = 0; i < polls; i++) {
    await poll(r);
    if (await probe()) return;
  }
  throw new Error(`${what}: not after ${polls} polls`);
}

beforeEach(() => {
  run = undefined;
});

afterEach(async () => {
  await run?.stop();
});

describe('the poller example against PostgreSQL', () => {
  it('creates, alters and drops roles and databases as their rows are inserted, changed and deleted, and reports their status', async () => {
    const r = await startRun();
    const [alice, bob, app] = [r.name('alice'), r.name('bob'), r.name('app')];
    await desireRole(r, alice, true, 5);
    await desireRole(r, bob);
    await poll(r);
    expect(await role(r, alice)).toEqual({ canLogin: true, limit: 5, comment: r.db.marker });
    expect(await role(r, bob)).toEqual({ canLogin: false, limit: -1, comment: r.db.marker });
    expect(await status(r, 'role', alice)).toMatchObject({
      phase: 'ready',
      message: 'login, connection limit 5',
    });

    await desireDatabase(r, app, alice);
    await poll(r);
    expect(await database(r, app)).toEqual({ owner: alice, comment: r.db.marker });
    expect(await status(r, 'database', app)).toMatchObject({ phase: 'ready', message: `owned by ${alice}` });

    await desireRole(r, alice, false, 2);
    await desireDatabase(r, app, bob);
    await poll(r);
    expect(await role(r, alice)).toMatchObject({ canLogin: false, limit: 2 });
    expect((await database(r, app))?.owner).toBe(bob);
    // Every poll reconciles every listed request (resync), changed or not: bob was listed by three.
    expect((await status(r, 'role', bob))?.reconciles).toBe(3);

    await r.admin.sql`delete from ${table(r.admin, 'desired_databases')}`;
    await r.admin.sql`delete from ${table(r.admin, 'desired_roles')} where name <> ${r.name('anchor')}`;
    // bob owns app until app is dropped: if his worker runs first, his drop waits for the next poll.
    await pollUntil(r, 'all dropped', async () => (await role(r, bob)) === undefined);
    expect(await database(r, app)).toBeUndefined();
    expect(await role(r, alice)).toBeUndefined();
    for (const [kind, name] of [
      ['role', alice],
      ['role', bob],
      ['database', app],
    ] as const) {
      expect(await status(r, kind, name)).toBeUndefined();
    }
  });

  it('leaves alone roles and databases it did not create, desired or not, and reports the conflict', async () => {
    const r = await startRun();
    const [byHand, other, db] = [r.name('by_hand'), r.name('other'), r.name('hand_db')];
    await r.admin.sql`create role ${r.admin.sql(byHand)} nologin`;
    await r.admin.sql`create role ${r.admin.sql(other)} nologin`;
    await r.admin.sql.unsafe(`comment on role "${other}" is 'converge examples/poller another.instance'`);
    await r.admin.sql`create database ${r.admin.sql(db)}`;
    const dbOwner = (await database(r, db))?.owner;
    await desireRole(r, byHand, true, 3);
    await desireDatabase(r, db, r.name('anchor'));
    await poll(r);
    expect(await role(r, byHand)).toEqual({ canLogin: false, limit: -1, comment: null });
    expect(await database(r, db)).toEqual({ owner: dbOwner, comment: null });
    expect(await status(r, 'role', byHand)).toMatchObject({
      phase: 'conflict',
      message: `role ${byHand} exists and was not created here: left alone`,
    });
    expect((await status(r, 'database', db))?.phase).toBe('conflict');

    await r.admin.sql`delete from ${table(r.admin, 'desired_databases')}`;
    await r.admin.sql`delete from ${table(r.admin, 'desired_roles')} where name = ${byHand}`;
    await poll(r);
    await poll(r);
    expect(await role(r, byHand)).toBeDefined();
    expect(await role(r, other)).toBeDefined();
    expect(await database(r, db)).toBeDefined();
    expect(await status(r, 'role', byHand)).toBeUndefined();
    expect(r.errors.size).toBe(0);
  });

  it('holds a database that waits for its owner for its whole requeueAfter: polls in between do not run it (openclarity B2/B3, hold)', async () => {
    const r = await startRun();
    const [owner, app] = [r.name('owner'), r.name('app')];
    await desireDatabase(r, app, owner);
    await poll(r); // t = 1000: app waits; held until 4500
    expect(await status(r, 'database', app)).toMatchObject({
      phase: 'waiting',
      message: `waiting for its owner role ${owner}`,
      reconciles: 1,
    });
    expect(r.controller.stats().waiting).toBe(1);

    await desireRole(r, owner);
    await poll(r); // t = 2000: the owner is created; app is listed and enqueued, and the add is ignored
    expect(await role(r, owner)).toBeDefined();
    await poll(r); // t = 3000
    await poll(r); // t = 4000
    expect(await database(r, app)).toBeUndefined();
    expect((await status(r, 'database', app))?.reconciles).toBe(1);

    await r.clock.advanceTo(HOLD_MS + INTERVAL_MS); // the held requeue fires at 4500
    await eventually(
      'the database after its hold',
      async () => (await database(r, app)) !== undefined || undefined,
    );
    await eventually('idle', () => idle(r) || undefined);
    expect(await status(r, 'database', app)).toMatchObject({ phase: 'ready', reconciles: 2 });
  });

  it('does not retry a failed reconcile: it runs again on the next poll, once per poll (openclarity D6)', async () => {
    const r = await startRun();
    const [owner, app] = [r.name('owner'), r.name('app')];
    await desireRole(r, owner);
    await poll(r);
    await desireDatabase(r, app, owner);
    await poll(r);
    expect(await database(r, app)).toMatchObject({ owner });

    // The role is no longer desired, but it owns a database that is: PostgreSQL refuses the drop.
    await r.admin.sql`delete from ${table(r.admin, 'desired_roles')} where name = ${owner}`;
    await poll(r);
    const key = requestKey({ kind: 'role', name: owner });
    expect(r.errors.get(key)).toBe(1);
    expect(await status(r, 'role', owner)).toMatchObject({ phase: 'error' });
    expect((await status(r, 'role', owner))?.message).toMatch(
      /cannot be dropped because some objects depend on it/,
    );
    // Nothing is scheduled: no backoff timer waits to run it again.
    expect(r.controller.stats()).toMatchObject({ retries: 0, waiting: 0 });
    expect(await role(r, owner)).toBeDefined();

    await poll(r);
    await poll(r);
    expect(r.errors.get(key)).toBe(3);
    expect(r.controller.stats()).toMatchObject({ retries: 0, waiting: 0 });

    // Give the database to the anchor: the drop goes through on a later poll.
    await desireDatabase(r, app, r.name('anchor'));
    await pollUntil(r, 'the role dropped', async () => (await role(r, owner)) === undefined);
    expect(await status(r, 'role', owner)).toBeUndefined();
  });

  it('drops an add of a request that is processing: it is not run again when it finishes (openclarity A3)', async () => {
    const r = await startRun();
    const alice = r.name('alice');
    await desireRole(r, alice);
    await poll(r);
    const before = (await status(r, 'role', alice))?.reconciles ?? 0;

    // The test holds a lock on the status table: every reconcile blocks at its report.
    const lock = await r.admin.sql.reserve();
    try {
      await lock`begin`;
      await lock`lock table ${table(r.admin, 'status')} in exclusive mode`;
      let events = r.poller.stats().events;
      await r.clock.advance(INTERVAL_MS);
      await eventually('both requests processing', () => {
        const { processing } = r.controller.stats();
        return (r.poller.stats().events > events && processing === 2) || undefined;
      });
      events = r.poller.stats().events;
      await r.clock.advance(INTERVAL_MS); // this poll adds both requests while they process
      await eventually('the second poll', () => r.poller.stats().events > events || undefined);
      expect(r.controller.stats()).toMatchObject({ depth: 0, processing: 2 });
    } finally {
      await lock`commit`;
      lock.release();
    }
    await eventually('idle', () => idle(r) || undefined);
    expect((await status(r, 'role', alice))?.reconciles).toBe(before + 1);
  });
});

describe('the poller example without PostgreSQL', () => {
  it('says where it looked and what to set when nothing answers', async () => {
    const env = process.env;
    const saved = { PGHOST: env.PGHOST, PGPORT: env.PGPORT, DATABASE_URL: env.DATABASE_URL };
    env.PGPORT = '1';
    delete env.PGHOST;
    delete env.DATABASE_URL;
    try {
      const error = await connectPostgres('converge_poller', 1).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PostgresUnreachableError);
      expect((error as Error).message).toMatch(
        /^PostgreSQL is not reachable at \S+@127\.0\.0\.1:1\/\S+ \(connect ECONNREFUSED 127\.0\.0\.1:1\): start it, or set PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE or DATABASE_URL$/,
      );
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete env[name];
        else env[name] = value;
      }
    }
  });
});
