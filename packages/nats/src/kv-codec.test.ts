/**
 * The `codecFor` option: buckets laid out by another program (bare-name keys, values without
 * metadata) read and written in place; codecs that throw or return junk never break anything.
 */
import {
  InternalError,
  InvalidError,
  type KubeObject,
  MemoryLogger,
  NotFoundError,
  resourceType,
  type WatchEvent,
} from '@converge/runtime';
import { type KV, Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { MalformedValueError } from './errors.ts';
import { encodeKey } from './keys.ts';
import { convergeCodec, type KvCodec } from './kv-codec.ts';
import { NatsBackend } from './nats-backend.ts';
import type { NatsBackendOptions } from './options.ts';
import { sharedNatsUrl, uniqueSuffix } from './test-harness.ts';
import { deleteBuckets } from './test-support.ts';

const APPS = resourceType({
  group: 'kumori.example',
  version: 'v1',
  kind: 'Application',
  plural: 'applications',
  namespaced: true,
});

const text = new TextEncoder();
const untext = new TextDecoder();

/** A layout like a Go controller's: the key is the name, the value the spec's JSON, one namespace. */
const bareNames: KvCodec = {
  name: 'bare-names',
  encodeKey: ({ namespace, name }) => {
    if (namespace !== 'default') throw new Error('only namespace default');
    return name;
  },
  decodeKey: (key) => ({ namespace: 'default', name: key }),
  encodeValue: (object) => text.encode(JSON.stringify((object as { spec?: unknown }).spec ?? {})),
  decodeValue: (data, { key }) => ({
    metadata: { name: key.name, namespace: key.namespace },
    spec: JSON.parse(untext.decode(data)),
  }),
};

interface Setup {
  readonly backend: NatsBackend;
  readonly kv: KV;
  close(): Promise<void>;
}

/** A bucket another program made and filled, then a backend serving it with `codec`. */
async function existingBucket(
  codec: KvCodec | undefined,
  fill: (kv: KV) => Promise<void>,
  options: Partial<NatsBackendOptions> = {},
): Promise<Setup> {
  const url = await sharedNatsUrl();
  const bucket = `kumori${uniqueSuffix()}`;
  const nc = await connect({ servers: url });
  const kv = await new Kvm(nc).create(bucket, { history: 5 });
  await fill(kv);
  const backend = await NatsBackend.connect({
    servers: url,
    types: [APPS],
    bucketFor: () => bucket,
    codecFor: () => codec,
    ...options,
  });
  return {
    backend,
    kv,
    close: async () => {
      await backend.close();
      await nc.close();
      await deleteBuckets(url, bucket);
    },
  };
}

let setup: Setup | undefined;
afterEach(async () => {
  await setup?.close();
  setup = undefined;
});

async function names(events: AsyncIterable<WatchEvent>): Promise<string[]> {
  const seen: string[] = [];
  for await (const event of events) {
    if (event.type === 'BOOKMARK') break;
    seen.push(event.object.metadata.name ?? '');
  }
  return seen;
}

describe('codecFor', () => {
  it('a custom codec reads a bucket another program wrote, in place: list, get, watch', async () => {
    setup = await existingBucket(bareNames, async (kv) => {
      await kv.put('hello', JSON.stringify({ image: 'nginx' }));
      await kv.put('world', JSON.stringify({ image: 'redis' }));
    });
    const { backend } = setup;
    const list = await backend.list(APPS);
    expect(
      list.items.map((o) => [o.metadata.name, o.metadata.namespace, (o as { spec?: unknown }).spec]),
    ).toEqual([
      ['hello', 'default', { image: 'nginx' }],
      ['world', 'default', { image: 'redis' }],
    ]);
    const hello = await backend.get(APPS, { namespace: 'default', name: 'hello' });
    expect(hello).toMatchObject({ apiVersion: 'kumori.example/v1', kind: 'Application' });
    expect(Number(hello.metadata.resourceVersion)).toBeGreaterThan(0);
    expect(await names(backend.watch(APPS, { sendInitialEvents: true, allowBookmarks: true }))).toEqual([
      'hello',
      'world',
    ]);
    expect(backend.stats().malformedValues).toBe(0);
    // The bucket is used as it was made: its history is the other program's.
    expect((await setup.kv.status()).history).toBe(5);
  });

  it("a custom codec writes the other program's layout: creates, updates and deletes land as its keys and values", async () => {
    setup = await existingBucket(bareNames, async () => {});
    const { backend, kv } = setup;
    await backend.create(APPS, {
      metadata: { name: 'web', namespace: 'default' },
      spec: { image: 'nginx' },
    } as KubeObject);
    expect(untext.decode((await kv.get('web'))?.value)).toBe('{"image":"nginx"}');
    // The layout has no room for metadata: what is read back has none but name, namespace and revision.
    const read = await backend.get(APPS, { namespace: 'default', name: 'web' });
    expect(read.metadata.uid).toBeUndefined();
    await backend.update(APPS, { ...read, spec: { image: 'caddy' } } as KubeObject);
    expect(untext.decode((await kv.get('web'))?.value)).toBe('{"image":"caddy"}');
    await backend.delete(APPS, { namespace: 'default', name: 'web' });
    expect((await kv.get('web'))?.operation).toBe('DEL');
  });

  it('without codecFor the default is convergeCodec, the <namespace>.<name> layout', async () => {
    setup = await existingBucket(undefined, async () => {});
    const { backend, kv } = setup;
    await backend.create(APPS, { metadata: { name: 'a.b', namespace: 'default' }, spec: {} } as KubeObject);
    const entry = await kv.get(encodeKey('default', 'a.b'));
    expect(entry?.operation).toBe('PUT');
    expect(JSON.parse(untext.decode(entry?.value))).toMatchObject({ metadata: { name: 'a.b' }, spec: {} });
    expect(convergeCodec.encodeKey({ namespace: 'default', name: 'a.b' }, { type: APPS, bucket: 'b' })).toBe(
      encodeKey('default', 'a.b'),
    );
  });

  it('a write the codec cannot hold is an InvalidError; a get of a key it cannot make is NotFound', async () => {
    const refusing: KvCodec = {
      ...bareNames,
      name: 'refusing',
      encodeKey: ({ namespace, name }) => {
        if (name === 'throws') throw new Error('no');
        if (name === 'bad-key') return 'has space';
        if (name === 'not-back') return 'other';
        return bareNames.encodeKey({ namespace, name }, { type: APPS, bucket: '' });
      },
      encodeValue: (object) => {
        if (object.metadata.name === 'no-value') throw new Error('cannot encode');
        if (object.metadata.name === 'not-bytes') return 'text' as unknown as Uint8Array;
        return bareNames.encodeValue(object, { type: APPS, bucket: '' });
      },
    };
    setup = await existingBucket(refusing, async () => {});
    const { backend } = setup;
    for (const [name, namespace] of [
      ['throws', 'default'],
      ['bad-key', 'default'],
      ['not-back', 'default'],
      ['no-value', 'default'],
      ['not-bytes', 'default'],
      ['x', 'elsewhere'],
    ] as const) {
      await expect(
        backend.create(APPS, { metadata: { name, namespace }, spec: {} } as KubeObject),
        name,
      ).rejects.toBeInstanceOf(InvalidError);
    }
    await expect(backend.get(APPS, { namespace: 'elsewhere', name: 'x' })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    await expect(backend.delete(APPS, { namespace: 'default', name: 'throws' })).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  it('a codec that throws or returns junk never breaks a list, a watch or a get: entries are skipped, logged and counted', async () => {
    const logger = new MemoryLogger();
    /** Values whose printing throws. */
    const unprintable = fc.constantFrom<unknown>(Object.create(null), {
      toString: () => {
        throw new Error('no printing');
      },
    });
    /** What one codec call does: throw something, or return an arbitrary value. */
    const outcome = fc.oneof(
      fc.record({
        throws: fc.oneof(
          fc.string(),
          fc.constant(undefined),
          unprintable,
          fc.anything({
            withNullPrototype: true,
            withBigInt: true,
            withDate: true,
            withMap: true,
            withSet: true,
            withTypedArray: true,
            withSparseArray: true,
          }),
        ),
      }),
      fc.record({
        returns: fc.anything({
          withNullPrototype: true,
          withBigInt: true,
          withDate: true,
          withMap: true,
          withSet: true,
          withTypedArray: true,
          withSparseArray: true,
        }),
      }),
    );
    /** Key decoding: mostly the right key, so the value's decoding is exercised too. */
    const keyOutcomes = fc.oneof(
      { arbitrary: fc.constant({ valid: true } as const), weight: 3 },
      { arbitrary: outcome, weight: 1 },
    );
    let keyOutcome: { throws: unknown } | { returns: unknown } | { valid: true } = { returns: undefined };
    let valueOutcome: { throws: unknown } | { returns: unknown } = { returns: undefined };
    const run = (o: { throws: unknown } | { returns: unknown }): unknown => {
      if ('throws' in o) throw o.throws;
      return o.returns;
    };
    const runKey = (key: string): unknown =>
      'valid' in keyOutcome ? { namespace: 'default', name: key } : run(keyOutcome);
    const chaotic: KvCodec = {
      name: 'chaotic',
      encodeKey: ({ name }) => name,
      decodeKey: (key) => (key === 'good' ? { namespace: 'default', name: key } : (runKey(key) as never)),
      encodeValue: () => text.encode('{}'),
      decodeValue: (_data, { key }) =>
        key.name === 'good' ? { metadata: {}, spec: { ok: true } } : run(valueOutcome),
    };
    setup = await existingBucket(
      chaotic,
      async (kv) => {
        await kv.put('good', '{}');
        for (const key of ['k1', 'k2', 'k3']) await kv.put(key, 'whatever');
      },
      { logger },
    );
    const { backend } = setup;
    await fc.assert(
      fc.asyncProperty(keyOutcomes, outcome, async (k, v) => {
        keyOutcome = k;
        valueOutcome = v;
        const before = backend.stats().malformedValues;
        const list = await backend.list(APPS);
        expect(list.items.map((o) => o.metadata.name)).toContain('good');
        for (const item of list.items) {
          expect(typeof item.metadata.name).toBe('string');
          expect(item.metadata.namespace).toBe('default');
        }
        const watched = await names(backend.watch(APPS, { sendInitialEvents: true, allowBookmarks: true }));
        expect(watched).toContain('good');
        const got = await backend.get(APPS, { namespace: 'default', name: 'k1' }).catch((e: unknown) => e);
        if (got instanceof Error) {
          expect(got instanceof NotFoundError || got instanceof InternalError).toBe(true);
          if (got instanceof InternalError) expect(got.cause).toBeInstanceOf(MalformedValueError);
        }
        // Three junk entries, each skipped by the list and the watch unless the codec made an object of it.
        const skipped = 3 * 2 - (list.items.length - 1) - (watched.length - 1);
        expect(backend.stats().malformedValues - before).toBeGreaterThanOrEqual(skipped);
      }),
      { numRuns: 60 },
    );
    expect(backend.stats().malformedValues).toBeGreaterThan(0);
    expect(logger.records.some((r) => r.level === 'warn' && r.message === 'Skipping a malformed value')).toBe(
      true,
    );
  });

  it('codecFor must be a function returning a KvCodec: anything else is an OptionsError', async () => {
    const url = await sharedNatsUrl();
    await expect(NatsBackend.connect({ servers: url, codecFor: 'json' as never })).rejects.toMatchObject({
      code: 'CONVERGE_ERR_OPTIONS_INVALID',
    });
    const prefix = `t${uniqueSuffix()}_`;
    try {
      await expect(
        NatsBackend.connect({
          servers: url,
          bucketPrefix: prefix,
          types: [APPS],
          codecFor: () => ({ name: 'half' }) as never,
        }),
      ).rejects.toMatchObject({ code: 'CONVERGE_ERR_OPTIONS_INVALID' });
    } finally {
      await deleteBuckets(url, prefix);
    }
  });
});
