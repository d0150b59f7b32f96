import { applyMergePatch, BadRequestError, InvalidError } from '@converge/runtime';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { patchSchemaFor } from './builtin-schemas.ts';
import type { StructSchema } from './schema.ts';
import { applyStrategicMergePatch } from './strategic-merge.ts';

const POD = patchSchemaFor('', 'v1', 'Pod') as StructSchema;
const CONFIGMAP = patchSchemaFor('', 'v1', 'ConfigMap') as StructSchema;

const names = fc.constantFrom('app', 'log', 'proxy', 'init');
const envNames = fc.constantFrom('A', 'B', 'C');
const finalizers = fc.constantFrom('a/x', 'b/y', 'c/z');

const env = fc.uniqueArray(fc.record({ name: envNames, value: fc.constantFrom('1', '2') }), {
  selector: (e) => e.name,
  maxLength: 3,
});
const container = fc.record(
  { name: names, image: fc.constantFrom('v1', 'v2'), env },
  { requiredKeys: ['name'] },
);
const livePod = fc.record({
  metadata: fc.record({ name: fc.constant('p'), finalizers: fc.uniqueArray(finalizers, { maxLength: 3 }) }),
  spec: fc.record({ containers: fc.uniqueArray(container, { selector: (c) => c.name, maxLength: 4 }) }),
});

const envPatch = fc.uniqueArray(
  fc.oneof(
    fc.record({ name: envNames, value: fc.constantFrom('1', '3', null) }),
    envNames.map((name) => ({ name, $patch: 'delete' })),
  ),
  { selector: (e) => e.name, maxLength: 3 },
);
const containerPatch = fc.oneof(
  fc.record(
    { name: names, image: fc.constantFrom('v2', 'v3', null), env: envPatch },
    { requiredKeys: ['name'] },
  ),
  names.map((name) => ({ name, $patch: 'delete' })),
);
/** A patch like kubectl's: container changes, optionally with a consistent $setElementOrder. */
const podPatch = fc
  .record({
    containers: fc.uniqueArray(containerPatch, { selector: (c) => c.name, maxLength: 3 }),
    extra: fc.uniqueArray(names, { maxLength: 2 }),
    order: fc.boolean(),
    add: fc.uniqueArray(finalizers, { maxLength: 2 }),
    remove: fc.uniqueArray(finalizers, { maxLength: 2 }),
    labels: fc.dictionary(fc.constantFrom('x', 'y'), fc.constantFrom('1', null)),
  })
  .map(({ containers, extra, order, add, remove, labels }) => {
    const spec: { containers: typeof containers; [directive: string]: unknown } = { containers };
    if (order) {
      const listed = containers.filter((c) => !('$patch' in c)).map((c) => c.name);
      const all = [...listed, ...extra.filter((n) => !listed.includes(n))];
      spec['$setElementOrder/containers'] = all.map((name) => ({ name }));
    }
    const metadata: Record<string, unknown> = { labels, finalizers: add };
    if (remove.length > 0) metadata['$deleteFromPrimitiveList/finalizers'] = remove;
    return { metadata, spec };
  });

describe('strategic merge patch (properties)', () => {
  it('applying the same patch twice gives the same result as applying it once', () => {
    fc.assert(
      fc.property(livePod, podPatch, (live, patch) => {
        const once = applyStrategicMergePatch(live, patch, POD);
        expect(applyStrategicMergePatch(once, patch, POD)).toEqual(once);
      }),
      { numRuns: 500 },
    );
  });

  it('a patch naming a container leaves every other container as it was', () => {
    fc.assert(
      fc.property(livePod, podPatch, (live, patch) => {
        const touched = new Set(patch.spec.containers.map((c) => c.name));
        const result = applyStrategicMergePatch(live, patch, POD) as typeof live;
        for (const c of live.spec.containers) {
          if (!touched.has(c.name)) expect(result.spec.containers).toContainEqual(c);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('on a ConfigMap, a patch without directives is a JSON merge patch (RFC 7386)', () => {
    const key = fc.constantFrom('a', 'b', 'c', 'data', 'metadata');
    const scalar = fc.oneof(fc.string({ maxLength: 3 }), fc.integer(), fc.boolean());
    const tree = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, scalar, fc.array(scalar, { maxLength: 3 }), tie('object')),
      object: fc.dictionary(key, fc.oneof(tie('value'), fc.constant(null)), { maxKeys: 4 }),
    }));
    fc.assert(
      fc.property(tree.object, tree.object, (original, patch) => {
        expect(applyStrategicMergePatch(original, patch, CONFIGMAP)).toEqual(
          applyMergePatch(original, patch),
        );
      }),
      { numRuns: 500 },
    );
  });

  it('never throws anything but a BadRequestError or an InvalidError, and never changes its inputs', () => {
    const key = fc.constantFrom(
      'containers',
      'env',
      'name',
      'image',
      'finalizers',
      '$patch',
      '$retainKeys',
      '$setElementOrder/containers',
      '$setElementOrder/finalizers',
      '$deleteFromPrimitiveList/finalizers',
      '$setElementOrder',
      'x',
    );
    const leaf = fc.oneof(
      fc.constantFrom('replace', 'delete', 'merge', 'app', 'a/x'),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
    );
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, leaf, fc.array(tie('value'), { maxLength: 3 }), tie('object')),
      object: fc.dictionary(key, tie('value'), { maxKeys: 4 }),
    }));
    const original = fc.oneof(livePod, json.object);
    const patch = fc.oneof(json.object, podPatch, json.value);
    fc.assert(
      fc.property(original, patch, (o, p) => {
        const before = structuredClone({ o, p });
        try {
          applyStrategicMergePatch(o, { spec: p, metadata: p }, POD);
          applyStrategicMergePatch(o, p, POD);
        } catch (error) {
          expect(error instanceof BadRequestError || error instanceof InvalidError).toBe(true);
        }
        expect({ o, p }).toEqual(before);
      }),
      { numRuns: 2000 },
    );
  });
});
