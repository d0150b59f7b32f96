import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../object/index.ts';
import { createCache } from './index.ts';

type Op =
  | {
      readonly kind: 'apply';
      readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
      readonly name: string;
      readonly ns: string;
      readonly tag: string;
    }
  | {
      readonly kind: 'replace';
      readonly items: readonly { readonly name: string; readonly ns: string; readonly tag: string }[];
    };

const name = fc.constantFrom('a', 'b', 'c', 'd');
const ns = fc.constantFrom('', 'x', 'y');
const tag = fc.constantFrom('t1', 't2', 't3');
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant('apply' as const),
    type: fc.constantFrom('ADDED', 'MODIFIED', 'DELETED'),
    name,
    ns,
    tag,
  }),
  fc.record({
    kind: fc.constant('replace' as const),
    items: fc.array(fc.record({ name, ns, tag }), { maxLength: 6 }),
  }),
);

const keyOf = (o: { name: string; ns: string }): string => `${o.ns}/${o.name}`;

describe('cache properties', () => {
  it('after any sequence of writes the cache equals a model map, indexes equal a scan, and replace reports the exact diff', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const { reader, writer } = createCache({ indexes: { tag: (o) => [o.metadata.labels?.tag ?? ''] } });
        const model = new Map<string, string>();
        let rv = 0;
        const make = (o: { name: string; ns: string; tag: string }): KubeObject => ({
          metadata: { name: o.name, namespace: o.ns, resourceVersion: String(++rv), labels: { tag: o.tag } },
        });
        for (const o of ops) {
          if (o.kind === 'apply') {
            writer.apply({ type: o.type, object: make(o) });
            if (o.type === 'DELETED') model.delete(keyOf(o));
            else model.set(keyOf(o), o.tag);
            continue;
          }
          const before = new Map(model);
          const next = new Map(o.items.map((i) => [keyOf(i), i.tag] as const));
          const result = writer.replace(o.items.map(make), String(rv));
          const k = (x: KubeObject): string => `${x.metadata.namespace}/${x.metadata.name}`;
          expect(new Set(result.created.map(k))).toEqual(
            new Set([...next.keys()].filter((x) => !before.has(x))),
          );
          expect(new Set(result.deleted.map(k))).toEqual(
            new Set([...before.keys()].filter((x) => !next.has(x))),
          );
          expect(new Set(result.updated.map((u) => k(u.object)))).toEqual(
            new Set([...next.keys()].filter((x) => before.has(x))),
          );
          model.clear();
          for (const [key, value] of next) model.set(key, value);
        }
        const cached = new Map(
          reader.list().map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o.metadata.labels?.tag]),
        );
        expect(cached).toEqual(model);
        expect(reader.size).toBe(model.size);
        for (const t of ['t1', 't2', 't3']) {
          const viaIndex = reader
            .byIndex('tag', t)
            .map((o) => `${o.metadata.namespace}/${o.metadata.name}`)
            .sort();
          const viaScan = [...model]
            .filter(([, v]) => v === t)
            .map(([key]) => key)
            .sort();
          expect(viaIndex).toEqual(viaScan);
        }
        for (const n of ['', 'x', 'y']) {
          expect(reader.list({ namespace: n }).length).toBe(
            n === '' ? model.size : [...model.keys()].filter((key) => key.startsWith(`${n}/`)).length,
          );
        }
        const stats = reader.stats();
        expect(stats.indexes.tag?.objects).toBe(model.size);
        expect(stats.namespaces).toBe(new Set([...model.keys()].map((key) => key.split('/')[0])).size);
      }),
      { numRuns: 300 },
    );
  });
});
