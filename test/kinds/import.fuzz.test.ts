/**
 * Properties of `importCrd`: for any kind built from the supported TypeBox constructors, importing
 * its CRD and evaluating the generated module gives exactly the same CRD; for any text, and any
 * CRD with a random part replaced by random JSON, the result is a module or a CrdImportError.
 */
import { stripTypeScriptTypes } from 'node:module';
import * as kube from '@converge/kube';
import { CrdImportError, crdsOf, defineKind, importCrd, type Kind, Type } from '@converge/kube';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { generated } from './arbitraries.ts';

/** Evaluates a generated module: types stripped, its import bound to @converge/kube. */
function evaluate(source: string): Kind[] {
  const code = stripTypeScriptTypes(source)
    .replace(/^import \{[^}]*\} from '@converge\/kube';$/m, '')
    .replace(/^export const (\w+) =/gm, 'out.$1 =');
  const out: Record<string, Kind> = {};
  new Function('kube', 'out', `const { defineKind, IntOrString, Type } = kube;\n${code}`)(kube, out);
  return Object.values(out);
}

const base = { group: 'example.com', kind: 'Gadget' } as const;

describe('importCrd of generated CRDs', () => {
  it('gives back exactly the CRD it was imported from', () => {
    const kinds = fc.tuple(generated(3), fc.option(generated(2), { nil: undefined }), fc.boolean());
    fc.assert(
      fc.property(kinds, ([spec, status, twoVersions]) => {
        const v1 = defineKind({
          ...base,
          version: 'v1',
          spec: Type.Object({ field: spec.schema }),
          ...(status === undefined ? {} : { status: Type.Object({ field: status.schema }) }),
          printerColumns: [{ name: "It's", type: 'string', jsonPath: '.spec.field' }],
        });
        const list = twoVersions
          ? [defineKind({ ...base, version: 'v1alpha1', storage: false, spec: Type.Object({}) }), v1]
          : [v1];
        const crds = crdsOf(list);
        const source = importCrd(crds.map((crd) => stringify(crd)).join('---\n'));
        expect(crdsOf(evaluate(source))).toEqual(crds);
      }),
      { numRuns: 150 },
    );
  });
});

describe('importCrd of malformed input', () => {
  const valid = crdsOf([
    defineKind({
      ...base,
      version: 'v1',
      spec: Type.Object({ a: Type.String(), b: Type.Optional(Type.Array(Type.Integer())) }),
      status: Type.Object({ ready: Type.Boolean() }),
    }),
  ])[0];

  /** Every path into a JSON value. */
  function paths(value: unknown, prefix: readonly (string | number)[] = []): (string | number)[][] {
    const here = [[...prefix]];
    if (Array.isArray(value)) return [...here, ...value.flatMap((v, i) => paths(v, [...prefix, i]))];
    if (typeof value === 'object' && value !== null)
      return [...here, ...Object.entries(value).flatMap(([k, v]) => paths(v, [...prefix, k]))];
    return here;
  }

  function replaced(value: unknown, path: readonly (string | number)[], by: unknown): unknown {
    if (path.length === 0) return by;
    const [head, ...rest] = path as [string | number, ...(string | number)[]];
    const copy = structuredClone(value) as Record<string | number, unknown>;
    copy[head] = replaced(copy[head], rest, by);
    return copy;
  }

  function outcome(text: string): void {
    try {
      expect(typeof importCrd(text)).toBe('string');
    } catch (error) {
      expect(error).toBeInstanceOf(CrdImportError);
    }
  }

  it('gives a module or a CrdImportError for any text', () => {
    fc.assert(fc.property(fc.string({ maxLength: 200 }), outcome), { numRuns: 300 });
  });

  it('gives a module or a CrdImportError for a CRD with any part replaced by any JSON', () => {
    const all = paths(valid);
    fc.assert(
      fc.property(fc.constantFrom(...all), fc.jsonValue({ maxDepth: 3 }), (path, by) => {
        outcome(stringify(replaced(valid, path, by)));
      }),
      { numRuns: 500 },
    );
  });
});
