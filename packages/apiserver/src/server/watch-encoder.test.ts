import type { KubeObject } from '@converge/runtime';
import { describe, expect, it } from 'vitest';
import type { ApiResource } from './api-resource.ts';
import { builtinResources } from './builtin-resources.ts';
import { WatchEncoder } from './watch-encoder.ts';

const { resources } = builtinResources();
const find = (group: string, kind: string): ApiResource => {
  const resource = resources.find((r) => r.group === group && r.kind === kind);
  if (resource === undefined) throw new Error(`${group}/${kind} missing`);
  return resource;
};

/** The encoding, which is synchronous (a string, not a promise) unless a conversion webhook converts. */
function jsonOf(encoder: WatchEncoder, resource: ApiResource, object: KubeObject): string {
  const text = encoder.encode(resource, object);
  expect(typeof text).toBe('string');
  return text as string;
}

describe('watch event encoding', () => {
  it('serializes one stored object once for every watcher of the same change', () => {
    const encoder = new WatchEncoder();
    const configMaps = find('', 'ConfigMap');
    const object = Object.freeze({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: Object.freeze({ name: 'a', resourceVersion: '5' }),
    });
    const lines = Array.from({ length: 100 }, () =>
      encoder.line('MODIFIED', jsonOf(encoder, configMaps, object)),
    );
    expect(new Set(lines).size).toBe(1);
    expect(lines[0]).toBe(`{"type":"MODIFIED","object":${JSON.stringify(object)}}\n`);
    expect(encoder.stats).toEqual({ hits: 99, misses: 1 });
  });

  it('keeps one encoding per served version of a converted object', () => {
    const encoder = new WatchEncoder();
    const core = find('', 'Event');
    const events = find('events.k8s.io', 'Event');
    const stored = Object.freeze({ apiVersion: 'v1', kind: 'Event', metadata: { name: 'e' }, message: 'hi' });
    expect(JSON.parse(jsonOf(encoder, events, stored))).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      note: 'hi',
    });
    expect(JSON.parse(jsonOf(encoder, core, stored))).toMatchObject({ apiVersion: 'v1', message: 'hi' });
    jsonOf(encoder, events, stored);
    expect(encoder.stats).toEqual({ hits: 1, misses: 2 });
  });
});
