import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cpuMs } from '../cpu-test-support.ts';
import { decodeProtobufObject, ProtobufDecodeError, ProtobufUnsupportedKindError } from './index.ts';
import {
  ANNOTATED_CONFIGMAP,
  ANNOTATED_NAMESPACE,
  ANNOTATED_SECRET,
  ANNOTATED_SERVICE_ACCOUNT,
  KUBECTL_CONFIGMAP,
  KUBECTL_DOCKER_SECRET,
  KUBECTL_NAMESPACE,
} from './testdata/fixtures.ts';
import { encodeProtobufObject, envelope, ProtoWriter } from './testdata/proto-writer.ts';

const text = fc.string({ unit: 'grapheme', maxLength: 12 });
const nonEmpty = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 });
const dict = (value: fc.Arbitrary<string>) => fc.dictionary(text, value, { minKeys: 1, maxKeys: 4 });
const some = <T>(item: fc.Arbitrary<T>) => fc.array(item, { minLength: 1, maxLength: 3 });
const timestamp = fc
  .integer({ min: -62_135_596_800, max: 253_402_300_799 })
  .map((s) => new Date(s * 1000).toISOString().replace('.000Z', 'Z'));
const base64 = fc.uint8Array({ maxLength: 16 }).map((b) => Buffer.from(b).toString('base64'));

const metadata = fc.record(
  {
    name: nonEmpty,
    generateName: nonEmpty,
    namespace: nonEmpty,
    uid: nonEmpty,
    resourceVersion: nonEmpty,
    generation: fc.integer({ min: 1, max: 2 ** 40 }),
    creationTimestamp: timestamp,
    deletionTimestamp: timestamp,
    deletionGracePeriodSeconds: fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
    labels: dict(text),
    annotations: dict(text),
    ownerReferences: some(
      fc.record(
        {
          apiVersion: text,
          kind: text,
          name: text,
          uid: text,
          controller: fc.boolean(),
          blockOwnerDeletion: fc.boolean(),
        },
        { requiredKeys: ['apiVersion', 'kind', 'name', 'uid'] },
      ),
    ),
    finalizers: some(text),
    managedFields: some(
      fc.record(
        {
          manager: nonEmpty,
          operation: fc.constantFrom('Apply', 'Update'),
          apiVersion: nonEmpty,
          time: timestamp,
          fieldsType: fc.constant('FieldsV1'),
          fieldsV1: fc.dictionary(text, fc.constant({})),
          subresource: nonEmpty,
        },
        { requiredKeys: [] },
      ),
    ),
  },
  { requiredKeys: [] },
);

const objects = fc.oneof(
  fc.record(
    {
      apiVersion: fc.constant('v1'),
      kind: fc.constant('ConfigMap'),
      metadata,
      data: dict(text),
      binaryData: dict(base64),
      immutable: fc.boolean(),
    },
    { requiredKeys: ['apiVersion', 'kind', 'metadata'] },
  ),
  fc.record(
    {
      apiVersion: fc.constant('v1'),
      kind: fc.constant('Secret'),
      metadata,
      data: dict(base64),
      stringData: dict(text),
      type: nonEmpty,
      immutable: fc.boolean(),
    },
    { requiredKeys: ['apiVersion', 'kind', 'metadata'] },
  ),
  fc.record({
    apiVersion: fc.constant('v1'),
    kind: fc.constant('Namespace'),
    metadata,
    spec: fc.record({ finalizers: some(text) }, { requiredKeys: [] }),
    status: fc.record(
      {
        phase: nonEmpty,
        conditions: some(
          fc.record(
            { type: text, status: text, lastTransitionTime: timestamp, reason: nonEmpty, message: nonEmpty },
            { requiredKeys: ['type', 'status'] },
          ),
        ),
      },
      { requiredKeys: [] },
    ),
  }),
  fc.record(
    {
      apiVersion: fc.constant('v1'),
      kind: fc.constant('ServiceAccount'),
      metadata,
      secrets: some(
        fc.record(
          {
            kind: nonEmpty,
            namespace: nonEmpty,
            name: nonEmpty,
            uid: nonEmpty,
            apiVersion: nonEmpty,
            resourceVersion: nonEmpty,
            fieldPath: nonEmpty,
          },
          { requiredKeys: [] },
        ),
      ),
      imagePullSecrets: some(fc.record({ name: nonEmpty })),
      automountServiceAccountToken: fc.boolean(),
    },
    { requiredKeys: ['apiVersion', 'kind', 'metadata'] },
  ),
);

/** Decodes, asserting the only failures are the typed ones and any success is plain JSON. */
function decodeOrTypedError(body: Uint8Array): void {
  try {
    const decoded = decodeProtobufObject(body);
    expect(JSON.parse(JSON.stringify(decoded.object))).toEqual(decoded.object);
    expect(decoded.object.kind).toBe(decoded.kind);
  } catch (error) {
    if (error instanceof ProtobufDecodeError || error instanceof ProtobufUnsupportedKindError) return;
    throw error;
  }
}

type Mutation =
  | { readonly op: 'set'; readonly at: number; readonly byte: number }
  | { readonly op: 'delete'; readonly at: number; readonly count: number }
  | { readonly op: 'insert'; readonly at: number; readonly bytes: Uint8Array }
  | { readonly op: 'truncate'; readonly at: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant('set' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ op: fc.constant('delete' as const), at: fc.nat(), count: fc.integer({ min: 1, max: 8 }) }),
  fc.record({
    op: fc.constant('insert' as const),
    at: fc.nat(),
    bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }),
  }),
  fc.record({ op: fc.constant('truncate' as const), at: fc.nat() }),
);

function mutate(body: Uint8Array, mutations: readonly Mutation[]): Uint8Array {
  let bytes = [...body];
  for (const m of mutations) {
    const at = bytes.length === 0 ? 0 : m.at % bytes.length;
    if (m.op === 'set') bytes[at] = m.byte;
    else if (m.op === 'delete') bytes.splice(at, m.count);
    else if (m.op === 'insert') bytes.splice(at, 0, ...m.bytes);
    else bytes = bytes.slice(0, at);
  }
  return Uint8Array.from(bytes);
}

describe('round trips', () => {
  it('any object of a decoded kind survives encode → decode unchanged', () => {
    fc.assert(
      fc.property(objects, (object) => {
        expect(decodeProtobufObject(encodeProtobufObject(object)).object).toEqual(object);
      }),
      { numRuns: 400 },
    );
  });
});

describe('fuzzing: the decoder answers every input with a result or a typed error', () => {
  const magic = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);

  it('random bytes, with and without the magic', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.uint8Array({ maxLength: 256 }), (withMagic, bytes) => {
        decodeOrTypedError(withMagic ? Uint8Array.from([...magic, ...bytes]) : bytes);
      }),
      { numRuns: 3000 },
    );
  });

  it('random bytes as the raw message of each decoded kind', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('Namespace', 'ConfigMap', 'Secret', 'ServiceAccount'),
        fc.uint8Array({ maxLength: 256 }),
        (kind, raw) => decodeOrTypedError(envelope('v1', kind, raw)),
      ),
      { numRuns: 3000 },
    );
  });

  it('mutated valid bodies (flipped, deleted, inserted bytes and truncations)', () => {
    const seeds = [
      KUBECTL_NAMESPACE,
      KUBECTL_CONFIGMAP,
      KUBECTL_DOCKER_SECRET,
      ANNOTATED_CONFIGMAP,
      ANNOTATED_SECRET,
      ANNOTATED_NAMESPACE,
      ANNOTATED_SERVICE_ACCOUNT,
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...seeds),
        fc.array(mutation, { minLength: 1, maxLength: 4 }),
        (seed, mutations) => decodeOrTypedError(mutate(seed, mutations)),
      ),
      { numRuns: 3000 },
    );
  });

  it('mutated encodings of random objects', () => {
    fc.assert(
      fc.property(objects, fc.array(mutation, { minLength: 1, maxLength: 3 }), (object, mutations) =>
        decodeOrTypedError(mutate(encodeProtobufObject(object), mutations)),
      ),
      { numRuns: 1000 },
    );
  });

  it('a megabyte of nested unknown groups ends promptly with a typed error', () => {
    const w = new ProtoWriter();
    for (let i = 0; i < 1_000_000; i++) w.tag(9, 3);
    const started = cpuMs();
    expect(() => decodeProtobufObject(envelope('v1', 'ConfigMap', w.finish()))).toThrow(ProtobufDecodeError);
    expect(cpuMs() - started).toBeLessThan(5_000);
  });

  it('a body with 50 000 labels decodes in linear time', () => {
    const w = new ProtoWriter();
    w.message(1, (m) => {
      for (let i = 0; i < 50_000; i++) m.mapEntry(11, `k${i}`, `v${i}`);
    });
    const started = cpuMs();
    const { object } = decodeProtobufObject(envelope('v1', 'ConfigMap', w.finish()));
    expect(Object.keys(object.metadata.labels ?? {})).toHaveLength(50_000);
    expect(cpuMs() - started).toBeLessThan(5_000);
  });
});
