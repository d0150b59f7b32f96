import { ConflictError, deepEqual } from '@converge/runtime';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { patchSchemaFor } from './builtin-schemas.ts';
import { serverSideApply } from './server-side-apply.ts';
import { mergeApplied } from './structured-merge.ts';

const SCHEMA = patchSchemaFor('apps', 'v1', 'Deployment');

const container = fc.record(
  {
    name: fc.constantFrom('app', 'log', 'proxy'),
    image: fc.constantFrom('v1', 'v2'),
    env: fc.uniqueArray(fc.record({ name: fc.constantFrom('A', 'B'), value: fc.constantFrom('1', '2') }), {
      selector: (e) => e.name,
      maxLength: 2,
    }),
    ports: fc.uniqueArray(fc.record({ containerPort: fc.constantFrom(80, 443) }), {
      selector: (p) => p.containerPort,
      maxLength: 2,
    }),
  },
  { requiredKeys: ['name'] },
);

/** An apply configuration of a Deployment touching a random subset of fields. */
const config = fc
  .record(
    {
      labels: fc.dictionary(fc.constantFrom('app', 'tier'), fc.constantFrom('a', 'b'), { maxKeys: 2 }),
      finalizers: fc.uniqueArray(fc.constantFrom('a/x', 'b/y'), { maxLength: 2 }),
      replicas: fc.integer({ min: 0, max: 3 }),
      containers: fc.uniqueArray(container, { selector: (c) => c.name, maxLength: 3 }),
    },
    { requiredKeys: [] },
  )
  .map(({ labels, finalizers, replicas, containers }) => {
    const metadata: Record<string, unknown> = { name: 'web' };
    if (labels !== undefined) metadata.labels = labels;
    if (finalizers !== undefined) metadata.finalizers = finalizers;
    const spec: Record<string, unknown> = {};
    if (replicas !== undefined) spec.replicas = replicas;
    if (containers !== undefined) spec.template = { spec: { containers } };
    return { apiVersion: 'apps/v1', kind: 'Deployment', metadata, spec };
  });

function apply(
  live: object | undefined,
  applied: object,
  manager: string,
  force = false,
  now = '2026-11-01T10:00:00Z',
) {
  return serverSideApply({ live, applied, manager, force, apiVersion: 'apps/v1', schema: SCHEMA, now });
}

describe('server-side apply (properties)', () => {
  it('applying the same configuration twice changes nothing the second time, managedFields included', () => {
    fc.assert(
      fc.property(fc.option(config, { nil: undefined }), config, (other, mine) => {
        const start = other === undefined ? undefined : apply(undefined, other, 'other').object;
        const once = apply(start, mine, 'me', true).object as { metadata: Record<string, unknown> };
        // A configuration that owns no field leaves an untracked object: the next apply attributes
        // it to before-first-apply, as kube-apiserver does.
        fc.pre(once.metadata.managedFields !== undefined);
        const twice = apply(once, mine, 'me', false, '2026-11-02T00:00:00Z').object;
        expect(twice).toEqual(once);
      }),
      { numRuns: 300 },
    );
  });

  it('the sole owner applying the live object (without managedFields) leaves it unchanged', () => {
    fc.assert(
      fc.property(config, (initial) => {
        const live = apply(undefined, initial, 'me').object as { metadata: Record<string, unknown> };
        // An object nobody owns (the configuration set no field) is attributed to before-first-apply.
        fc.pre(live.metadata.managedFields !== undefined);
        const { managedFields: _, ...metadata } = live.metadata;
        const again = apply(live, { ...live, metadata }, 'me', false, '2026-11-02T00:00:00Z').object;
        expect(again).toEqual(live);
      }),
      { numRuns: 300 },
    );
  });

  it('after a forced apply the object holds every value of the configuration', () => {
    fc.assert(
      fc.property(config, config, (theirs, mine) => {
        const live = apply(undefined, theirs, 'them').object;
        const result = apply(live, mine, 'me', true).object;
        const { managedFields: _, ...metadata } = (result as { metadata: Record<string, unknown> }).metadata;
        const plain = { ...result, metadata };
        expect(mergeApplied(plain, mine, SCHEMA)).toEqual(plain);
      }),
      { numRuns: 300 },
    );
  });

  it('an apply conflicts only if it changes a value the other manager applied', () => {
    fc.assert(
      fc.property(config, config, (theirs, mine) => {
        const live = apply(undefined, theirs, 'them').object;
        const { managedFields: _, ...metadata } = (live as { metadata: Record<string, unknown> }).metadata;
        const unchanged = deepEqual(mergeApplied({ ...live, metadata }, mine, SCHEMA), { ...live, metadata });
        try {
          apply(live, mine, 'me');
        } catch (error) {
          expect(error).toBeInstanceOf(ConflictError);
          expect(unchanged).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });
});
