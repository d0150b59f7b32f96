import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from './object.ts';
import { toPartialObjectMetadata } from './partial-object-metadata.ts';

const object = fc.record({
  apiVersion: fc.option(fc.string(), { nil: undefined }),
  kind: fc.option(fc.string(), { nil: undefined }),
  metadata: fc.record({ name: fc.string(), labels: fc.dictionary(fc.string(), fc.string()) }),
  spec: fc.jsonValue(),
  status: fc.jsonValue(),
});

describe('toPartialObjectMetadata', () => {
  it('keeps only apiVersion, kind and the metadata itself (shared, not copied), whatever the body', () => {
    fc.assert(
      fc.property(object, (given) => {
        const partial = toPartialObjectMetadata(given as KubeObject, 'apps/v1', 'Deployment');
        expect(Object.keys(partial).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
        expect(partial.apiVersion).toBe('apps/v1');
        expect(partial.kind).toBe('Deployment');
        expect(partial.metadata).toBe(given.metadata);
      }),
    );
  });

  it('is idempotent, and returns an object already in that shape as it is', () => {
    fc.assert(
      fc.property(object, (given) => {
        const once = toPartialObjectMetadata(given as KubeObject, 'v1', 'Pod');
        expect(toPartialObjectMetadata(once, 'v1', 'Pod')).toBe(once);
      }),
    );
  });

  it('relabels an object of another apiVersion or kind (a meta.k8s.io PartialObjectMetadata) with the read kind', () => {
    const metadata = { name: 'a' };
    const partial = { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata };
    expect(toPartialObjectMetadata(partial, 'v1', 'Secret')).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata,
    });
  });

  it('freezes the result of a frozen object, and only then', () => {
    const frozen = Object.freeze({ metadata: Object.freeze({ name: 'a' }), spec: {} });
    expect(Object.isFrozen(toPartialObjectMetadata(frozen, 'v1', 'Pod'))).toBe(true);
    const thawed: KubeObject & { spec: object } = { metadata: { name: 'a' }, spec: {} };
    expect(Object.isFrozen(toPartialObjectMetadata(thawed, 'v1', 'Pod'))).toBe(false);
  });
});
