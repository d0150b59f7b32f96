import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { conversionRequest, convertedObjectsOf, mergeConverted } from './conversion-review.ts';

const widget = (name: string, apiVersion = 'example.com/v1', extra: Record<string, unknown> = {}) => ({
  apiVersion,
  kind: 'Widget',
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, generation: 1, labels: { a: 'b' }, ...extra },
  spec: { size: 1 },
});

describe('conversionRequest', () => {
  it('sends only the objects not in the desired version, in the first review version spoken', () => {
    const objects = [widget('a'), widget('b', 'example.com/v2'), widget('c')];
    const request = conversionRequest(objects, 'example.com/v2', ['v3', 'v1beta1', 'v1']);
    expect(request?.sent).toEqual([0, 2]);
    expect(request?.reviewVersion).toBe('v1beta1');
    expect(request?.body).toEqual({
      apiVersion: 'apiextensions.k8s.io/v1beta1',
      kind: 'ConversionReview',
      request: { uid: request?.uid, desiredAPIVersion: 'example.com/v2', objects: [objects[0], objects[2]] },
    });
    expect(conversionRequest([widget('x', 'example.com/v2')], 'example.com/v2', ['v1'])).toBeUndefined();
  });
});

describe('convertedObjectsOf', () => {
  const request = conversionRequest([widget('a')], 'example.com/v2', ['v1']);
  if (request === undefined) throw new Error('no request');
  const v1beta1 = conversionRequest([widget('a')], 'example.com/v2', ['v1beta1']);
  if (v1beta1 === undefined) throw new Error('no request');

  it('v1beta1 answers are not checked for kind or uid, as upstream', () => {
    expect(
      convertedObjectsOf({ response: { result: { status: 'Success' }, convertedObjects: [1] } }, v1beta1),
    ).toEqual([1]);
  });

  it('anything answered is an array of objects or an Error, never another throw', () => {
    fc.assert(
      fc.property(fc.anything(), (answer) => {
        try {
          expect(Array.isArray(convertedObjectsOf(answer, request))).toBe(true);
        } catch (error) {
          expect(error).toBeInstanceOf(Error);
        }
      }),
    );
  });
});

describe('mergeConverted', () => {
  const objects = [widget('a'), widget('b', 'example.com/v2'), widget('c')];
  const request = conversionRequest(objects, 'example.com/v2', ['v1']);
  if (request === undefined) throw new Error('no request');
  const gvk = 'example.com/v2, Kind=WidgetList';

  it('puts answers back in place and restores metadata except labels and annotations', () => {
    const answers = [
      {
        ...widget('a', 'example.com/v2', { generation: 9, labels: { x: 'y' }, annotations: { n: 'm' } }),
        spec: { r: 1 },
      },
      { ...widget('c', 'example.com/v2', { labels: null }), spec: { r: 3 } },
    ];
    const out = mergeConverted(objects, request, answers, 'example.com/v2', gvk, true);
    expect(out[0]).toEqual({
      ...widget('a', 'example.com/v2', { labels: { x: 'y' }, annotations: { n: 'm' } }),
      spec: { r: 1 },
    });
    expect(out[1]).toBe(objects[1]);
    const { labels: _dropped, ...withoutLabels } = widget('c', 'example.com/v2').metadata;
    expect(out[2]).toEqual({
      apiVersion: 'example.com/v2',
      kind: 'Widget',
      metadata: withoutLabels,
      spec: { r: 3 },
    });
  });

  it('arbitrary answers end in converted objects or an Error naming the list', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.anything(), fc.constant(widget('a', 'example.com/v2'))), { maxLength: 3 }),
        (answers) => {
          try {
            expect(mergeConverted(objects, request, answers, 'example.com/v2', gvk, true)).toHaveLength(3);
          } catch (error) {
            expect((error as Error).message).toMatch(
              /^conversion webhook for example\.com\/v2, Kind=WidgetList returned /,
            );
          }
        },
      ),
    );
  });
});
