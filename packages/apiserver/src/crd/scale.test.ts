import { describe, expect, it } from 'vitest';
import { CrdScaleError } from './errors.ts';
import { causeText } from './field-errors.ts';
import { scaleObject, scaleOf, setScale, validateScale } from './scale.ts';
import type { ScaleSubresource } from './types.ts';

const scale: ScaleSubresource = {
  specReplicasPath: '.spec.replicas',
  statusReplicasPath: '.status.replicas',
  labelSelectorPath: '.status.selector',
};
const website = {
  apiVersion: 'example.com/v1',
  kind: 'Website',
  metadata: {
    name: 'w1',
    namespace: 'default',
    uid: 'u-1',
    resourceVersion: '42',
    creationTimestamp: '2026-01-01T00:00:00Z',
  },
  spec: { replicas: 3 },
  status: { replicas: 2, selector: 'app=web' },
};

describe('scaleOf', () => {
  it('reads spec and status replicas and the selector', () => {
    expect(scaleOf(website, scale)).toEqual({
      replicas: 3,
      statusReplicas: 2,
      selector: 'app=web',
      specReplicasFound: true,
    });
  });

  it('reads absent paths as zero and says the spec replicas were not set', () => {
    expect(scaleOf({ spec: {} }, scale)).toEqual({
      replicas: 0,
      statusReplicas: 0,
      selector: '',
      specReplicasFound: false,
    });
  });

  it("throws kube's accessor error for a non-integer or a path through a non-object", () => {
    expect(() => scaleOf({ spec: { replicas: 'x' } }, scale)).toThrow(
      new CrdScaleError('.spec.replicas accessor error: x is of the type string, expected int64'),
    );
    expect(() => scaleOf({ spec: 5 }, scale)).toThrow(
      '.spec accessor error: 5 is of the type int64, expected map[string]interface{}',
    );
  });
});

describe('scaleObject', () => {
  it('builds the autoscaling/v1 Scale kubectl expects', () => {
    expect(scaleObject(website, scale)).toEqual({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: {
        name: 'w1',
        namespace: 'default',
        uid: 'u-1',
        resourceVersion: '42',
        creationTimestamp: '2026-01-01T00:00:00Z',
      },
      spec: { replicas: 3 },
      status: { replicas: 2, selector: 'app=web' },
    });
  });

  it("omits zero spec replicas and an empty selector as Go's omitempty does", () => {
    expect(scaleObject({ metadata: { name: 'w' } }, scale)).toEqual({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: { name: 'w', creationTimestamp: null },
      spec: {},
      status: { replicas: 0 },
    });
  });
});

describe('setScale', () => {
  it('writes the spec replicas into a copy, creating missing objects', () => {
    expect(setScale(website, scale, 5)).toEqual({ ...website, spec: { replicas: 5 } });
    expect(setScale({ metadata: {} }, scale, 1)).toEqual({ metadata: {}, spec: { replicas: 1 } });
    expect(website.spec.replicas).toBe(3);
  });

  it('refuses to write through a non-object', () => {
    expect(() => setScale({ spec: 'x' }, scale, 1)).toThrow(CrdScaleError);
  });
});

describe('validateScale', () => {
  it('wants non-negative int32 replicas, with the JSONPath as the field', () => {
    expect(
      validateScale({ spec: { replicas: -1 }, status: { replicas: 2 ** 31 } }, scale).map(causeText),
    ).toEqual([
      '.spec.replicas: Invalid value: -1: should be a non-negative integer',
      '.status.replicas: Invalid value: 2147483648: should be less than or equal to 2147483647',
    ]);
    expect(validateScale(website, scale)).toEqual([]);
  });
});
