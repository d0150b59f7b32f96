import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyDefaults } from './defaults.ts';
import { pruneUnknownFields } from './prune.ts';
import { crdFor, dropKeys, schemaAndObject } from './testdata/arbitraries.ts';
import { validateCrd } from './validate-crd.ts';
import { validateCustomResource } from './validate-object.ts';

const RUNS = { numRuns: 200 };

describe('generated schemas and objects', () => {
  it('objects generated from a schema validate clean', () => {
    fc.assert(
      fc.property(schemaAndObject, ({ schema, object }) => {
        expect(validateCustomResource(schema, object)).toEqual([]);
      }),
      RUNS,
    );
  });

  it('every generated schema is one validateCrd accepts', () => {
    fc.assert(
      fc.property(schemaAndObject, ({ schema }) => {
        expect(validateCrd(crdFor(schema))).toEqual([]);
      }),
      RUNS,
    );
  });

  it('pruning leaves valid objects unchanged', () => {
    fc.assert(
      fc.property(schemaAndObject, ({ schema, object }) => {
        expect(pruneUnknownFields(schema, object)).toEqual({ object, pruned: [] });
      }),
      RUNS,
    );
  });

  it('pruning is idempotent, also on objects with unknown fields added anywhere', () => {
    fc.assert(
      fc.property(
        schemaAndObject,
        fc.jsonValue({ maxDepth: 2 }),
        fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
        ({ schema, object }, junk, keys) => {
          const polluted = pollute(object, junk, keys);
          const once = pruneUnknownFields(schema, polluted);
          const twice = pruneUnknownFields(schema, once.object);
          expect(twice).toEqual({ object: once.object, pruned: [] });
        },
      ),
      RUNS,
    );
  });

  it('defaulting is idempotent and keeps generated objects valid', () => {
    fc.assert(
      fc.property(schemaAndObject, fc.func(fc.boolean()), ({ schema, object }, keep) => {
        const once = applyDefaults(schema, object);
        expect(applyDefaults(schema, once)).toEqual(once);
        expect(validateCustomResource(schema, once)).toEqual([]);
        const sparse = dropKeys(object, keep);
        const filled = applyDefaults(schema, sparse);
        expect(applyDefaults(schema, filled)).toEqual(filled);
      }),
      RUNS,
    );
  });
});

/** Adds `junk` under each of `keys` in every object of `value`. */
function pollute(value: unknown, junk: unknown, keys: readonly string[]): unknown {
  if (Array.isArray(value)) return value.map((v) => pollute(v, junk, keys));
  if (typeof value !== 'object' || value === null) return value;
  // Object.fromEntries defines own properties, so a generated `__proto__` key (JSON.parse makes
  // one an own property too) stays data instead of becoming the copy's prototype.
  const entries: [string, unknown][] = Object.entries(value).map(([k, v]) => [k, pollute(v, junk, keys)]);
  for (const k of keys) if (!entries.some(([e]) => e === k)) entries.push([k, junk]);
  return Object.fromEntries(entries);
}
