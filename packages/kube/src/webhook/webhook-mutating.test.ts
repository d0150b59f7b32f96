import { deepEqual, denied, type JsonPatchOperation, type KubeObject, mutated } from '@converge/runtime';
import fc from 'fast-check';
import jsonpatch from 'fast-json-patch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  admissionReview,
  type HttpAnswer,
  type RunningServer,
  responseOf,
  runServer,
  type Website,
  website,
} from './webhook-test-support.ts';

/** The object the API server would store: the sent object with the answer's patch applied. */
function patched(sent: unknown, answer: HttpAnswer): unknown {
  const response = responseOf(answer);
  if (response.patch === undefined) return sent;
  expect(response.patchType).toBe('JSONPatch');
  const patch = JSON.parse(
    Buffer.from(String(response.patch), 'base64').toString('utf8'),
  ) as jsonpatch.Operation[];
  return jsonpatch.applyPatch(structuredClone(sent), patch, true, true).newDocument;
}

describe('mutating webhooks over HTTPS', () => {
  let running: RunningServer;
  let calls = 0;
  /** Set by the property test: what the next call to /random does to the object. */
  let randomEdit: (object: Record<string, unknown>) => Record<string, unknown> = (object) => object;

  beforeAll(async () => {
    running = await runServer((server) => {
      server.mutating<Website>('/default-website', {
        default(object) {
          calls++;
          object.spec.replicas ??= 1;
          object.metadata.labels = { ...object.metadata.labels, 'app.kubernetes.io/managed-by': 'converge' };
        },
      });
      server.mutating<Website>('/replace', {
        default: (object) => ({
          ...object,
          spec: { domain: object.spec.domain.toLowerCase(), tags: ['a/b', 'c~d'] },
        }),
      });
      server.mutating<Website>('/warn', {
        default(object) {
          if (object.spec.domain === '')
            return denied('spec.domain is required', { code: 422, reason: 'Invalid' });
          object.spec.replicas = 2;
          return mutated(object, { warnings: ['spec.replicas set to 2'] });
        },
      });
      server.mutating('/identity', { default: (object) => object });
      server.mutating('/random', {
        default: (object) =>
          randomEdit(object as unknown as Record<string, unknown>) as unknown as KubeObject,
      });
      server.mutating('/not-json', { default: (object) => ({ ...object, big: 10n }) as never });
    });
  });
  afterAll(() => running.stop());

  it('answers a defaulter with a base64 JSON patch that gives the defaulted object', async () => {
    const sent = website();
    const answer = await running.post('/default-website', admissionReview({ object: sent }));
    expect(responseOf(answer)).toMatchObject({ allowed: true, patchType: 'JSONPatch' });
    expect(patched(sent, answer)).toEqual({
      ...sent,
      metadata: { ...sent.metadata, labels: { 'app.kubernetes.io/managed-by': 'converge' } },
      spec: { ...sent.spec, replicas: 1 },
    });
  });

  it('answers without patch or patchType when the defaulter changed nothing', async () => {
    const answer = await running.post('/identity', admissionReview({ uid: 'same-1', object: website() }));
    expect(responseOf(answer)).toEqual({ uid: 'same-1', allowed: true });
  });

  it('diffs a replaced object, escaping / and ~ in keys of the patch paths', async () => {
    const sent = { ...website({ domain: 'Blog.Example.COM', replicas: 3 }), metadata: { name: 'a/b~c' } };
    const answer = await running.post('/replace', admissionReview({ object: sent }));
    expect(patched(sent, answer)).toEqual({
      ...sent,
      spec: { domain: 'blog.example.com', tags: ['a/b', 'c~d'] },
    });
  });

  it('passes warnings from mutated() and denials from denied()', async () => {
    const answer = await running.post('/warn', admissionReview({ object: website() }));
    expect(responseOf(answer)).toMatchObject({ allowed: true, warnings: ['spec.replicas set to 2'] });
    expect((patched(website(), answer) as Website).spec.replicas).toBe(2);
    const refused = await running.post('/warn', admissionReview({ object: website({ domain: '' }) }));
    expect(responseOf(refused)).toMatchObject({
      allowed: false,
      status: { code: 422, reason: 'Invalid', message: 'spec.domain is required' },
    });
    expect(responseOf(refused).patch).toBeUndefined();
  });

  it('admits a DELETE unchanged without calling the defaulter', async () => {
    calls = 0;
    const answer = await running.post(
      '/default-website',
      admissionReview({ uid: 'del-1', operation: 'DELETE', object: null, oldObject: website() }),
    );
    expect(responseOf(answer)).toEqual({ uid: 'del-1', allowed: true });
    expect(calls).toBe(0);
  });

  it('denies with code 500 when the defaulted object cannot be JSON', async () => {
    const answer = await running.post('/not-json', admissionReview({ object: website() }));
    expect(responseOf(answer)).toMatchObject({ allowed: false, status: { code: 500 } });
    expect(String((responseOf(answer).status as { message: string }).message)).toMatch(/not JSON/);
  });

  it('for random objects and random changes, the patch applied to the sent object gives the changed object', async () => {
    const key = fc.constantFrom('a', 'b/c', 'd~e', '', '0', 'replicas');
    const value: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.string({ maxLength: 5 })),
        fc.array(tie('v'), { maxLength: 3 }),
        fc.dictionary(key, tie('v'), { maxKeys: 3, noNullPrototype: true }),
      ),
    })).v;
    const spec = fc.dictionary(key, value, { maxKeys: 4, noNullPrototype: true });
    await fc.assert(
      fc.asyncProperty(spec, spec, fc.boolean(), async (before, after, keepSome) => {
        const sent = { apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'x' }, spec: before };
        const expected = JSON.parse(
          JSON.stringify({ ...sent, spec: keepSome ? { ...before, ...after } : after }),
        ) as Record<string, unknown>;
        randomEdit = () => structuredClone(expected);
        const answer = await running.post('/random', admissionReview({ object: sent }));
        const result = patched(JSON.parse(JSON.stringify(sent)), answer);
        expect(deepEqual(result, expected), JSON.stringify({ result, expected })).toBe(true);
        const patch = responseOf(answer).patch;
        const operations: JsonPatchOperation[] =
          patch === undefined ? [] : JSON.parse(Buffer.from(String(patch), 'base64').toString('utf8'));
        expect(operations.length === 0).toBe(deepEqual(sent, expected));
      }),
      { numRuns: 60 },
    );
  });
});
