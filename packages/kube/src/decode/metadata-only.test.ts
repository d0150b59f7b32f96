import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ResponseDecodeError } from '../errors.ts';
import { metadataOnlyObject } from './metadata-only.ts';

const pods = { apiVersion: 'v1', kind: 'Pod' };
const metadata = fc.record({
  name: fc.string({ minLength: 1 }),
  resourceVersion: fc.nat().map(String),
  labels: fc.dictionary(fc.string(), fc.string()),
});
const body = fc.dictionary(
  fc.string().filter((k) => !['apiVersion', 'kind', 'metadata', '__proto__'].includes(k)),
  fc.jsonValue(),
);

describe('metadataOnlyObject', () => {
  it('a PartialObjectMetadata and the full object of the kind give the same object: the kind’s apiVersion and kind, the metadata', () => {
    fc.assert(
      fc.property(
        metadata,
        body,
        fc.constantFrom('meta.k8s.io/v1', 'meta.k8s.io/v1beta1'),
        (m, rest, version) => {
          const expected = { apiVersion: 'v1', kind: 'Pod', metadata: m };
          const partial = { kind: 'PartialObjectMetadata', apiVersion: version, metadata: m };
          expect(metadataOnlyObject(partial, pods, 'list', 'items[0]')).toEqual(expected);
          expect(
            metadataOnlyObject(
              { ...rest, kind: 'Pod', apiVersion: 'v1', metadata: m },
              pods,
              'list',
              'items[0]',
            ),
          ).toEqual(expected);
          expect(metadataOnlyObject({ ...rest, metadata: m }, pods, 'list', 'items[0]')).toEqual(expected);
        },
      ),
    );
  });

  it('any other kind or apiVersion is a ResponseDecodeError naming the field, never relabelled', () => {
    fc.assert(
      fc.property(
        metadata,
        fc.string({ minLength: 1 }).filter((k) => k !== 'Pod' && k !== 'PartialObjectMetadata'),
        fc.string({ minLength: 1 }).filter((v) => v !== 'v1'),
        (m, kind, apiVersion) => {
          for (const object of [
            { kind, apiVersion: 'v1', metadata: m },
            { kind: 'Pod', apiVersion, metadata: m },
            { kind: 'PartialObjectMetadata', apiVersion, metadata: m },
          ]) {
            if (object.kind === 'PartialObjectMetadata' && apiVersion.startsWith('meta.k8s.io/v1')) continue;
            const error = (() => {
              try {
                metadataOnlyObject(object, pods, 'watch event', 'object');
              } catch (e) {
                return e;
              }
              return undefined;
            })();
            expect(error).toBeInstanceOf(ResponseDecodeError);
            expect((error as ResponseDecodeError).field).toBe('object.kind');
          }
        },
      ),
    );
  });

  it('an object without a metadata object is a ResponseDecodeError', () => {
    for (const object of [
      { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' },
      { metadata: [] },
      null,
      'x',
    ]) {
      expect(() => metadataOnlyObject(object, pods, 'list', 'items[3]')).toThrow(ResponseDecodeError);
    }
  });
});
