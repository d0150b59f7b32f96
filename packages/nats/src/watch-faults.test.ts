/**
 * Fault tests of watches on a private nats-server (rows 22 and 23 of the fault matrix): missed
 * heartbeats (the server paused with SIGSTOP), the watch's consumer deleted through the API, the
 * bucket's stream purged, the bucket deleted and recreated. Each fault is checked twice: on a
 * watch (exact events, or the error that ends it) and on an Informer (its cache ends equal to a
 * fresh list).
 *
 * Timing: the backends here use `heartbeatMs: 1000`. The client declares a consumer lost after two
 * missed heartbeats, checked once per heartbeat, so 2–3 s after the fault; recreating it takes a
 * round trip. A watch therefore resumes within ~3 s of a deleted consumer, and a 6 s pause is well
 * past the detection.
 */
import { ExpiredError, Informer, type KubeObject, type WatchEvent } from '@converge/runtime';
import { MemoryLogger } from '@converge/runtime/testing';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { NatsBackend } from './nats-backend.ts';
import type { NatsBackendOptions } from './options.ts';
import { type PrivateNats, startPrivateNats, uniqueSuffix } from './test-harness.ts';
import { CM, eventually, NS, retrying } from './test-support.ts';

/**
 * How long the tests' own administration requests (delete consumers, purge, delete and create a
 * stream) may take. The client's default is 5 s; a stream's delete and create on a private server's
 * file store took longer than that once on a loaded CI machine, which failed the test on the tool, not on
 * the code under test.
 */
const ADMIN_TIMEOUT_MS = 30_000;

/** How long the server stays paused: more than the three heartbeats after which it counts as lost. */
const PAUSE_MS = 6000;

const configMap = (name: string, v: string): KubeObject =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data: { v } }) as KubeObject;

/** `promise`, or a rejection naming `what` after `ms`. */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting until ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A watch read in the background: its events so far and how it ended. */
interface Watching {
  readonly events: WatchEvent[];
  /** Resolves with the error that ended the iteration (undefined for a normal end). */
  readonly ended: Promise<unknown>;
  readonly stop: () => void;
}

function watchInBackground(backend: NatsBackend, resourceVersion: string): Watching {
  const abort = new AbortController();
  const events: WatchEvent[] = [];
  const ended = (async () => {
    try {
      for await (const event of backend.watch(CM, { resourceVersion, signal: abort.signal }))
        events.push(event);
      return undefined;
    } catch (error) {
      return error;
    }
  })();
  return { events, ended, stop: () => abort.abort() };
}

const versions = (events: readonly WatchEvent[]): string[] =>
  events.map((e) => (e.type === 'BOOKMARK' ? e.resourceVersion : (e.object.metadata.resourceVersion ?? '')));

/** Creates `names`, returning their resourceVersions in order. */
async function createAll(backend: NatsBackend, names: readonly string[]): Promise<string[]> {
  const written: string[] = [];
  for (const name of names) {
    const created = await retrying(() => backend.create(CM, configMap(name, '0')));
    written.push(created.metadata.resourceVersion ?? '');
  }
  return written;
}

const names = (prefix: string, count: number): string[] =>
  Array.from({ length: count }, (_, i) => `${prefix}-${i}`);

/** `name@resourceVersion` of each object, sorted: what a cache must equal. */
const summary = (objects: readonly KubeObject[]): string =>
  JSON.stringify(objects.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`).sort());

describe('NATS watch faults (private server)', () => {
  let server: PrivateNats | undefined;
  let backend: NatsBackend | undefined;
  let admin: NatsConnection | undefined;
  let logger: MemoryLogger;
  afterEach(async () => {
    server?.resume();
    await backend?.close();
    await admin?.close();
    await server?.dispose();
    backend = undefined;
    admin = undefined;
    server = undefined;
  });

  async function start(options: Partial<NatsBackendOptions> = {}): Promise<NatsBackend> {
    server = await startPrivateNats();
    logger = new MemoryLogger();
    backend = await NatsBackend.connect({
      servers: server.url,
      types: [CM],
      bucketPrefix: `f${uniqueSuffix()}_`,
      heartbeatMs: 1000,
      logger,
      ...options,
    });
    admin = await connect({ servers: server.url });
    return backend;
  }

  /** The troubles the watches' consumers reported (see OrderedStreamOptions.onTrouble). */
  const troubles = (): unknown[] =>
    logger.records
      .filter((r) => r.message.startsWith('Watch consumer in trouble'))
      .map((r) => r.fields.reason);

  /** A JetStream manager on the admin connection, with {@link ADMIN_TIMEOUT_MS}. */
  const manager = () => jetstreamManager(admin as NatsConnection, { timeout: ADMIN_TIMEOUT_MS });

  /** The stream behind the ConfigMap bucket. */
  const stream = (): string => `KV_${(backend as NatsBackend).bucketName(CM)}`;

  /** Deletes every consumer on the bucket's stream (the watches' ordered consumers); returns how many. */
  async function deleteConsumers(): Promise<number> {
    const jsm = await manager();
    const found: string[] = [];
    for await (const info of jsm.consumers.list(stream())) found.push(info.name);
    for (const name of found) await jsm.consumers.delete(stream(), name);
    return found.length;
  }

  /** Freezes the server for {@link PAUSE_MS}, then lets it run again. */
  async function pause(): Promise<void> {
    const nats = server as PrivateNats;
    nats.pause();
    try {
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
    } finally {
      nats.resume();
    }
  }

  async function purge(): Promise<void> {
    await (await manager()).streams.purge(stream());
  }

  /** Deletes the bucket and creates it again (as another process would, with no marker entry). */
  async function recreate(): Promise<void> {
    const name = (backend as NatsBackend).bucketName(CM);
    await (await manager()).streams.delete(stream());
    await new Kvm(jetstream(admin as NatsConnection, { timeout: ADMIN_TIMEOUT_MS })).create(name, {
      history: 16,
    });
  }

  /**
   * Runs an Informer over 10 ConfigMaps, applies `fault`, then `changes`, and waits until the
   * cache equals a fresh list.
   */
  async function informerEndsCorrect(
    b: NatsBackend,
    fault: () => Promise<void>,
    changes: () => Promise<void>,
  ): Promise<void> {
    await createAll(b, names('cm', 10));
    const informer = new Informer({ backend: b, type: CM, backoff: { initialMs: 50, maxMs: 500 } });
    const abort = new AbortController();
    const running = informer.start(abort.signal);
    try {
      await informer.waitForSync(abort.signal);
      expect(informer.cache.list()).toHaveLength(10);
      await fault();
      await changes();
      const truth = summary((await b.list(CM)).items);
      await eventually(
        60_000,
        'the informer cache equals a fresh list',
        () => summary(informer.cache.list()) === truth,
      );
    } finally {
      abort.abort();
      await running;
    }
  }

  /** Updates cm-0..2, deletes cm-3..5 and creates cm-10..12. */
  async function updateDeleteCreate(b: NatsBackend): Promise<void> {
    for (let i = 0; i < 3; i++) {
      const current = await retrying(() => b.get(CM, { namespace: NS, name: `cm-${i}` }));
      await retrying(() => b.update(CM, { ...current, data: { v: 'changed' } } as KubeObject));
    }
    for (let i = 3; i < 6; i++) await retrying(() => b.delete(CM, { namespace: NS, name: `cm-${i}` }));
    await createAll(b, ['cm-10', 'cm-11', 'cm-12']);
  }

  describe('missed heartbeats: the server paused with SIGSTOP', () => {
    it('a watch delivers every revision written before and after the pause exactly once, in order', async () => {
      const b = await start();
      const watching = watchInBackground(b, (await b.list(CM)).resourceVersion);
      const written = await createAll(b, names('before', 5));
      await eventually(5000, 'the watch saw the first writes', () => watching.events.length === 5);
      await pause();
      written.push(...(await createAll(b, names('after', 5))));
      await eventually(10_000, 'the watch saw every write', () => watching.events.length >= written.length);
      watching.stop();
      expect(await watching.ended).toBeUndefined();
      expect(versions(watching.events)).toEqual(written);
      expect(watching.events.every((e) => e.type === 'ADDED')).toBe(true);
      // The fault was real: the client noticed the missing heartbeats.
      expect(troubles()).toContain('heartbeats_missed');
    });

    it('an Informer ends with a correct cache', async () => {
      const b = await start();
      await informerEndsCorrect(b, pause, () => updateDeleteCreate(b));
      expect(troubles()).toContain('heartbeats_missed');
    });
  });

  describe("the watch's consumer deleted through the API", () => {
    it('the client recreates it from the last delivered revision: no gap, no duplicate', async () => {
      const b = await start();
      const watching = watchInBackground(b, (await b.list(CM)).resourceVersion);
      const written = await createAll(b, names('before', 5));
      await eventually(5000, 'the watch saw the first writes', () => watching.events.length === 5);
      expect(await deleteConsumers()).toBe(1);
      written.push(...(await createAll(b, names('after', 5))));
      // Two missed heartbeats (2–3 s at heartbeatMs 1000), then one round trip to recreate it.
      await eventually(10_000, 'the watch saw every write', () => watching.events.length >= written.length);
      watching.stop();
      expect(await watching.ended).toBeUndefined();
      expect(versions(watching.events)).toEqual(written);
      expect(troubles()).toContain('ordered_consumer_recreated');
    });

    it('an Informer ends with a correct cache', async () => {
      const b = await start();
      await informerEndsCorrect(
        b,
        async () => {
          expect(await deleteConsumers()).toBeGreaterThanOrEqual(1);
        },
        () => updateDeleteCreate(b),
      );
    });
  });

  describe("the bucket's stream purged", () => {
    it('a running watch ends with an ExpiredError (410) at the next stream check', async () => {
      const b = await start({ streamCheckIntervalMs: 500 });
      const watching = watchInBackground(b, (await b.list(CM)).resourceVersion);
      const written = await createAll(b, names('before', 5));
      await eventually(5000, 'the watch saw the first writes', () => watching.events.length === 5);
      await purge();
      // The next revision follows the last one the watch saw: nothing in the revisions shows the purge.
      await b.create(CM, configMap('after', '0'));
      const ended = await within(5000, 'the watch ended', watching.ended);
      expect(ended).toBeInstanceOf(ExpiredError);
      expect((ended as ExpiredError).status).toBe(410);
      expect(versions(watching.events).slice(0, 5)).toEqual(written);
    });

    it('an Informer relists and its cache ends without the purged objects', async () => {
      const b = await start({ streamCheckIntervalMs: 500 });
      await informerEndsCorrect(b, purge, async () => {
        await createAll(b, names('after', 3));
      });
      expect((await b.list(CM)).items.map((o) => o.metadata.name)).toEqual(['after-0', 'after-1', 'after-2']);
    });
  });

  describe('the bucket deleted and recreated', () => {
    it('a running watch ends with an ExpiredError and reports nothing of the new bucket', async () => {
      // The default check interval (30 s) is longer than the test: the lost consumer triggers the check.
      const b = await start();
      const watching = watchInBackground(b, (await b.list(CM)).resourceVersion);
      const written = await createAll(b, names('before', 5));
      await eventually(5000, 'the watch saw the first writes', () => watching.events.length === 5);
      await recreate();
      // More revisions than the old bucket had, so the new ones pass the watch's last revision.
      await createAll(b, names('after', 10));
      const ended = await within(10_000, 'the watch ended', watching.ended);
      expect(ended).toBeInstanceOf(ExpiredError);
      expect(versions(watching.events)).toEqual(written);
    });

    it('an Informer relists and its cache ends equal to the new bucket', async () => {
      const b = await start();
      await informerEndsCorrect(b, recreate, async () => {
        await createAll(b, names('after', 15));
      });
      expect((await b.list(CM)).items).toHaveLength(15);
    });
  });
});
