import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ObjectMeta } from '../object/index.ts';
import { MetadataInterner } from './metadata-interner.ts';

/** A Pod's metadata as a ReplicaSet makes it, fresh from JSON (so no string or object is shared yet). */
function podMeta(name: string, owner = 'rs-uid-1', overrides: Record<string, unknown> = {}): ObjectMeta {
  return JSON.parse(
    JSON.stringify({
      name,
      namespace: 'team-a',
      generateName: 'web-5d4f8c-',
      labels: { app: 'web', 'pod-template-hash': '5d4f8c' },
      annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-11-20T10:15:30Z' },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d4f8c', uid: owner, controller: true },
      ],
      finalizers: ['example.com/cleanup'],
      uid: `uid-${name}`,
      resourceVersion: '7',
      creationTimestamp: '2026-12-07T02:09:21Z',
      ...overrides,
    }),
  ) as ObjectMeta;
}

describe('MetadataInterner', () => {
  it('gives siblings one frozen ownerReferences, labels, annotations and finalizers, and one copy of each string', () => {
    const interner = new MetadataInterner();
    const a = podMeta('web-1');
    const b = podMeta('web-2');
    const before = JSON.stringify(b);
    interner.intern(a);
    interner.intern(b);
    expect(JSON.stringify(b)).toBe(before);
    for (const field of ['ownerReferences', 'labels', 'annotations', 'finalizers'] as const) {
      expect(b[field]).toBe(a[field]);
      expect(Object.isFrozen(b[field])).toBe(true);
    }
    expect(Object.isFrozen(b.ownerReferences?.[0])).toBe(true);
    expect(Object.isFrozen(b)).toBe(false);
  });

  it('shares the creation timestamp of objects of other families created in the same second', () => {
    const interner = new MetadataInterner();
    const a = podMeta('web-1', 'rs-1');
    const b = podMeta('db-1', 'rs-2', { labels: { app: 'db' } });
    interner.intern(a);
    interner.intern(b);
    expect(b.creationTimestamp).toBe('2026-12-07T02:09:21Z');
    expect(b.ownerReferences).not.toBe(a.ownerReferences);
    expect(b.labels).toEqual({ app: 'db' });
  });

  it('keeps a value that differs, and shares it with the siblings that follow', () => {
    const interner = new MetadataInterner();
    const a = podMeta('web-1');
    const b = podMeta('web-2', 'rs-uid-1', { labels: { app: 'web', 'pod-template-hash': 'other' } });
    const c = podMeta('web-3', 'rs-uid-1', { labels: { app: 'web', 'pod-template-hash': 'other' } });
    for (const meta of [a, b, c]) interner.intern(meta);
    expect(a.labels).toEqual({ app: 'web', 'pod-template-hash': '5d4f8c' });
    expect(b.labels).toEqual({ app: 'web', 'pod-template-hash': 'other' });
    expect(c.labels).toBe(b.labels);
    expect(b.annotations).toBe(a.annotations);
  });

  it('does not share records with other keys, another key order, or a value of another type', () => {
    const interner = new MetadataInterner();
    const a = podMeta('web-1');
    interner.intern(a);
    const variants = [
      { labels: { app: 'web', 'pod-template-hash': '5d4f8c', extra: '' } },
      { labels: { 'pod-template-hash': '5d4f8c', app: 'web' } },
      { labels: { app: 'web' } },
      {
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'ReplicaSet',
            name: 'web-5d4f8c',
            uid: 'rs-uid-1',
            controller: 'true',
          },
        ],
      },
      { finalizers: ['example.com/cleanup', 'x'] },
    ];
    for (const [i, overrides] of variants.entries()) {
      const other = podMeta(`web-${i + 2}`, 'rs-uid-1', overrides);
      const before = JSON.stringify(other);
      interner.intern(podMeta('web-1'));
      interner.intern(other);
      expect(JSON.stringify(other)).toBe(before);
      const field = Object.keys(overrides)[0] as 'labels' | 'ownerReferences' | 'finalizers';
      expect(other[field]).not.toBe(a[field]);
    }
  });

  it('groups objects without owners by namespace', () => {
    const interner = new MetadataInterner();
    const fresh = (name: string, namespace: string) =>
      JSON.parse(JSON.stringify({ name, namespace, labels: { team: 'payments' } })) as ObjectMeta;
    const a = fresh('a', 'n1');
    const b = fresh('b', 'n1');
    const c = fresh('c', 'n2');
    for (const meta of [a, b, c]) interner.intern(meta);
    expect(b.labels).toBe(a.labels);
    expect(c.labels).not.toBe(a.labels);
    expect(c.labels).toEqual(a.labels);
  });

  it('leaves frozen metadata, and values that are not plain records or arrays, as they are', () => {
    const interner = new MetadataInterner();
    interner.intern(podMeta('web-1'));
    const frozen = Object.freeze(podMeta('web-2'));
    const labels = frozen.labels;
    interner.intern(frozen);
    expect(frozen.labels).toBe(labels);
    expect(Object.isFrozen(labels)).toBe(false);

    class Labels {
      app = 'web';
      'pod-template-hash' = '5d4f8c';
    }
    const odd = podMeta('web-3', 'rs-uid-1', {});
    (odd as { labels: unknown }).labels = new Labels();
    interner.intern(odd);
    expect(odd.labels).toBeInstanceOf(Labels);
  });

  it('for any objects, interning changes no value, key or key order, and everything it shares is frozen', () => {
    const word = fc.constantFrom('a', 'b', 'web', 'db', '2026-12-07T02:09:21Z', '');
    const record = fc.dictionary(fc.constantFrom('app', 'tier', 'x', 'y'), word, { maxKeys: 3 });
    const ref = fc.record(
      {
        apiVersion: fc.constantFrom('apps/v1', 'v1'),
        kind: fc.constantFrom('ReplicaSet', 'Job'),
        name: word,
        uid: fc.constantFrom('u1', 'u2', 'u3'),
        controller: fc.boolean(),
      },
      { requiredKeys: ['uid'] },
    );
    const meta = fc.record(
      {
        name: word,
        namespace: fc.constantFrom('n1', 'n2'),
        generateName: word,
        labels: record,
        annotations: record,
        ownerReferences: fc.array(ref, { maxLength: 2 }),
        finalizers: fc.array(word, { maxLength: 2 }),
        creationTimestamp: word,
        deletionTimestamp: word,
        generation: fc.integer({ min: 0, max: 3 }),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.array(meta, { maxLength: 30 }), (metas) => {
        const interner = new MetadataInterner();
        const objects = metas.map((m) => JSON.parse(JSON.stringify(m)) as ObjectMeta);
        for (const object of objects) interner.intern(object);
        expect(objects.map((o) => JSON.stringify(o))).toEqual(metas.map((m) => JSON.stringify(m)));
        const owners = new Map<object, number>();
        for (const object of objects) {
          for (const field of ['labels', 'annotations', 'ownerReferences', 'finalizers'] as const) {
            const value = object[field];
            if (value !== undefined) owners.set(value, (owners.get(value) ?? 0) + 1);
          }
        }
        for (const [value, count] of owners) if (count > 1) expect(Object.isFrozen(value)).toBe(true);
      }),
    );
  });
});
