import { describe, expect, it } from 'vitest';
import { acceptsAggregatedDiscovery, negotiateObject, parseAccept } from './media.ts';

describe('content negotiation', () => {
  it('orders Accept ranges by quality, keeping header order for ties, and drops q=0', () => {
    const ranges = parseAccept('application/yaml;q=0.5, application/json, text/html;q=0');
    expect(ranges.map((r) => r.type)).toEqual(['application/json', 'application/yaml']);
  });

  it('answers JSON for a missing Accept, */*, or protobuf followed by JSON', () => {
    expect(negotiateObject(undefined, false)).toEqual({ format: 'json' });
    expect(negotiateObject('*/*', false)).toEqual({ format: 'json' });
    expect(negotiateObject('application/vnd.kubernetes.protobuf,application/json', false)).toEqual({
      format: 'json',
    });
  });

  it('answers a Table only when a converter is installed, else falls back to the next range', () => {
    const kubectl =
      'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
    expect(negotiateObject(kubectl, true)).toEqual({ format: 'table', version: 'v1' });
    expect(negotiateObject(kubectl, false)).toEqual({ format: 'json' });
  });

  it('fails with a 406 when nothing acceptable is asked for', () => {
    expect(() => negotiateObject('text/html', false)).toThrow(/only the following media types are accepted/);
    expect(() => negotiateObject('application/vnd.kubernetes.protobuf', false)).toThrow(/application\/json/);
  });

  it('recognises aggregated discovery of v2 and v2beta1, whatever the parameter order', () => {
    expect(
      acceptsAggregatedDiscovery(
        'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json',
      ),
    ).toBe('v2');
    expect(
      acceptsAggregatedDiscovery('application/json;as=APIGroupDiscoveryList;v=v2beta1;g=apidiscovery.k8s.io'),
    ).toBe('v2beta1');
    expect(
      acceptsAggregatedDiscovery(
        'application/json, application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
      ),
    ).toBeUndefined();
  });
});
