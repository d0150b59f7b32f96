import { InternalError, type KubeObject, MemoryLogger } from '@converge/runtime';
import { type KV, Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { MalformedValueError } from './errors.ts';
import { decodeKey, encodeKey } from './keys.ts';
import { CM, NS, type TestBackend, testBackend } from './test-support.ts';

const configMap = (name: string): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: NS },
    data: { v: '1' },
  }) as KubeObject;

/** Values no ConfigMap of this bucket could be. */
const garbage: fc.Arbitrary<Uint8Array | string> = fc.oneof(
  fc.uint8Array({ maxLength: 64 }),
  fc.string({ maxLength: 64 }).filter((s) => {
    try {
      const parsed: unknown = JSON.parse(s);
      return typeof parsed !== 'object' || parsed === null || Array.isArray(parsed);
    } catch {
      return true;
    }
  }),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(Array.isArray(v) ? v : [v])),
  fc.constantFrom(
    '{"apiVersion":"v2","kind":"ConfigMap","metadata":{}}',
    '{"kind":"Secret","metadata":{}}',
    '{"apiVersion":"v1","kind":"ConfigMap"}',
    '{"metadata":[]}',
    '{"metadata":{"name":"someone-else"}}',
    '{"metadata":{"namespace":"elsewhere"}}',
    '{"metadata":{"labels":{"a":1}}}',
    '{"metadata":{"finalizers":"x"}}',
    '{"metadata":{"ownerReferences":[1]}}',
  ),
);

/** Keys: valid object keys and keys this backend never writes. */
const key = fc.oneof(
  fc.constantFrom('x', 'a.b.c', '_.cluster', 'bad_zz.name', `${NS}.A_5fB`),
  fc.stringMatching(/^[a-z]{1,8}$/).map((name) => encodeKey(NS, `junk-${name}`)),
);

describe('malformed values written by someone else', () => {
  let t: TestBackend | undefined;
  afterEach(async () => {
    await t?.destroy();
    t = undefined;
  });

  it('never break a list or a watch: they are skipped, logged and counted; valid objects are unaffected', async () => {
    const logger = new MemoryLogger();
    t = await testBackend([CM], { logger });
    const { backend, url } = t;
    const nc = await connect({ servers: url });
    const kv: KV = await new Kvm(nc).open(backend.bucketName(CM));
    try {
      const good = await backend.create(CM, configMap('good'));
      await fc.assert(
        fc.asyncProperty(fc.array(fc.tuple(key, garbage), { minLength: 1, maxLength: 5 }), async (writes) => {
          const start = (await backend.list(CM)).resourceVersion;
          const before = backend.stats().malformedValues;
          for (const [k, v] of writes) await kv.put(k, v);
          // Keys that decode to an object key: a watch may report those as DELETED (unreadable).
          const readable = writes.flatMap(([k]) => {
            const decoded = decodeKey(k);
            return decoded?.namespace === NS ? [decoded.name] : [];
          });
          const marker = await backend.create(CM, configMap(`marker-${start}`));
          const list = await backend.list(CM);
          expect(list.items.map((o) => o.metadata.name)).toEqual(
            expect.arrayContaining(['good', `marker-${start}`]),
          );
          for (const item of list.items) expect(readable).not.toContain(item.metadata.name);
          expect(backend.stats().malformedValues).toBeGreaterThan(before);
          // A watch replays the garbage without failing: at most DELETED for keys it cannot read.
          for await (const event of backend.watch(CM, { resourceVersion: start })) {
            if (event.type === 'BOOKMARK') continue;
            if (event.object.metadata.name === marker.metadata.name) break;
            expect(event.type).toBe('DELETED');
            expect(readable).toContain(event.object.metadata.name);
          }
          // And a watch from the start lists the good objects only.
          const initial: string[] = [];
          for await (const event of backend.watch(CM, { sendInitialEvents: true, allowBookmarks: true })) {
            if (event.type === 'BOOKMARK') break;
            initial.push(event.object.metadata.name ?? '');
          }
          expect(initial).toContain('good');
          for (const name of initial) expect(readable).not.toContain(name);
        }),
        { numRuns: 25 },
      );
      expect(await backend.get(CM, { namespace: NS, name: 'good' })).toEqual(good);
      expect(
        logger.records.some((r) => r.level === 'warn' && r.message === 'Skipping a malformed value'),
      ).toBe(true);
    } finally {
      await nc.close();
    }
  });

  it('get and update of a malformed key are InternalErrors caused by MalformedValueError; delete removes it; create finds it taken', async () => {
    t = await testBackend([CM]);
    const { backend, url } = t;
    const nc = await connect({ servers: url });
    const kv = await new Kvm(nc).open(backend.bucketName(CM));
    await kv.put(encodeKey(NS, 'junk'), 'not json');
    await nc.close();
    const error = await backend.get(CM, { namespace: NS, name: 'junk' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalError);
    expect((error as InternalError).cause).toBeInstanceOf(MalformedValueError);
    expect((error as InternalError).cause).toMatchObject({
      code: 'CONVERGE_ERR_NATS_MALFORMED_VALUE',
      reason: 'not UTF-8 JSON',
    });
    await expect(backend.update(CM, configMap('junk'))).rejects.toBeInstanceOf(InternalError);
    await expect(backend.create(CM, configMap('junk'))).rejects.toMatchObject({ reason: 'AlreadyExists' });
    expect(await backend.delete(CM, { namespace: NS, name: 'junk' })).toEqual({ status: 'deleted' });
    expect((await backend.create(CM, configMap('junk'))).metadata.name).toBe('junk');
  });
});
