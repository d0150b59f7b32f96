import { describe, expect, it } from 'vitest';
import { findResults, GoFloat, JsonPathSyntaxError, parseJsonPath } from './index.ts';

const widget = {
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: {
    name: 'w1',
    labels: { 'app.kubernetes.io/name': 'shop', tier: 'web' },
  },
  spec: { replicas: 3, ratio: 0.5, paused: false, size: null, ports: [80, 443, 8080], tags: ['a', 'b'] },
  status: {
    conditions: [
      { type: 'Synced', status: 'True', observedGeneration: 2 },
      { type: 'Ready', status: 'False', reason: 'Waiting', observedGeneration: 1.5 },
      { type: 'Healthy', status: 'True' },
    ],
    nodes: [{ name: 'n1', ready: true }, { name: 'n2', ready: false }, { name: 'n3' }],
  },
};

const find = (path: string) => findResults(widget, parseJsonPath(path));
const values = (path: string) => {
  const [found, error] = find(path);
  expect(error, path).toBeUndefined();
  return found;
};

describe('JSONPath fields', () => {
  it('follows dotted fields and returns the value found, null included', () => {
    expect(values('.spec.replicas')).toEqual([3]);
    expect(values('.spec.size')).toEqual([null]);
    expect(values('$.metadata.name')).toEqual(['w1']);
  });

  it('finds nothing, without error, for missing keys and fields of scalars', () => {
    expect(values('.spec.missing')).toEqual([]);
    expect(values('.spec.replicas.deeper')).toEqual([]);
    expect(values('.nothing.at.all')).toEqual([]);
  });

  it('takes escaped dots as part of a key', () => {
    expect(values('.metadata.labels.app\\.kubernetes\\.io/name')).toEqual(['shop']);
  });

  it("splits a ['key'] at its dots, as client-go's parser does", () => {
    expect(values(".metadata.labels['tier']")).toEqual(['web']);
    expect(values(".metadata.labels['app.kubernetes.io/name']")).toEqual([]);
  });

  it('expands * over maps and lists and .. recursively', () => {
    expect(values('.spec.tags[*]')).toEqual(['a', 'b']);
    expect(values('.metadata.labels.*')).toEqual(['shop', 'web']);
    expect(values('..name')).toEqual(['w1', 'n1', 'n2', 'n3']);
  });
});

describe('JSONPath arrays', () => {
  it('indexes from either end and slices with a step', () => {
    expect(values('.spec.ports[0]')).toEqual([80]);
    expect(values('.spec.ports[-1]')).toEqual([8080]);
    expect(values('.spec.ports[1:]')).toEqual([443, 8080]);
    expect(values('.spec.ports[::2]')).toEqual([80, 8080]);
    expect(values('.spec.ports[0,2]')).toEqual([80, 8080]);
  });

  it('reports an index out of bounds, or an index into a non-list, as an error', () => {
    expect(find('.spec.ports[3]')[1]).toBe('array index out of bounds: index 3, length 3');
    expect(find('.spec.replicas[0]')[1]).toContain('is not array or slice');
    expect(find('.spec.ports[0:1:0]')[1]).toBe('step must be > 0');
  });
});

describe('JSONPath filters', () => {
  it('selects list elements by string equality, with either quote', () => {
    expect(values('.status.conditions[?(@.type=="Ready")].status')).toEqual(['False']);
    expect(values(".status.conditions[?(@.type == 'Ready')].reason")).toEqual(['Waiting']);
    expect(values('.status.conditions[?(@.status!="True")].type')).toEqual(['Ready']);
  });

  it('skips elements without the compared field, and keeps elements with it for [?(@.x)]', () => {
    expect(values('.status.nodes[?(@.ready==true)].name')).toEqual(['n1']);
    expect(values('.status.nodes[?(@.ready)].name')).toEqual(['n1', 'n2']);
  });

  it('compares integers with integers and floats with floats, and fails across kinds', () => {
    // Synced's 2 is an int64, Ready's 1.5 a float64: comparing the latter with the literal 2 fails.
    expect(find('.status.conditions[?(@.observedGeneration>=2)].type')[1]).toBe(
      'incompatible types for comparison',
    );
    expect(findResults({ x: [{ y: 1.5 }, { y: 2.5 }] }, parseJsonPath('.x[?(@.y>=2.0)].y'))).toEqual([[2.5]]);
    expect(values('.spec.ports[?(@ > 100)]')).toEqual([443, 8080]);
    expect(find('.spec.tags[?(@ < 1.5)]')[1]).toBe('incompatible types for comparison');
  });

  it('parses float literals as floats even when integral', () => {
    expect(parseJsonPath('.x[?(@.y==2.0)]')).toEqual([
      { type: 'field', name: 'x' },
      {
        type: 'filter',
        left: [{ type: 'field', name: 'y' }],
        right: [{ type: 'float', value: 2 }],
        op: '==',
      },
    ]);
    expect(findResults({ x: [{ y: 1.5 }] }, parseJsonPath('.x[?(@.y==1.5)].y'))[0]).toEqual([1.5]);
    expect(new GoFloat(2).value).toBe(2);
  });

  it('reports an unknown operator as an error', () => {
    expect(find('.status.conditions[?(@.type==="R")].status')[1]).toBe('unrecognized filter operator ===');
  });
});

describe('JSONPath syntax', () => {
  it.each([
    ['{.spec}', 'unrecognized character'],
    ['.spec.ports[0', 'unterminated array'],
    ['.spec["replicas"]', 'invalid array index'],
    ['.status.conditions[?(@.type=="Ready"', 'unterminated filter'],
    ['.a.....b', 'invalid multiple recursive descent'],
    ['.a}.b', 'unexpected text after the action'],
    ['.a["\\q"]', 'invalid array index'],
    ['.a[?(@.b=="\\q")]', 'invalid syntax'],
    ['.a[1.2.3]', 'invalid array index'],
  ])('%s is rejected (%s)', (path, message) => {
    expect(() => parseJsonPath(path)).toThrow(JsonPathSyntaxError);
    expect(() => parseJsonPath(path)).toThrow(message);
  });

  it('unquotes Go escapes in string literals', () => {
    expect(parseJsonPath('"a\\tb\\u00e9\\"c"')).toEqual([{ type: 'text', text: 'a\tbé"c' }]);
    expect(() => parseJsonPath('"\\\'"')).toThrow('invalid syntax');
  });

  it('reports identifiers other than true and false as evaluation errors', () => {
    expect(findResults(widget, parseJsonPath('range'))[1]).toBe('unrecognized identifier range');
  });
});
