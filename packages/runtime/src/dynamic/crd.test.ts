import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isConvergeError } from '../errors.ts';
import type { CustomResourceDefinition, CustomResourceDefinitionVersion } from '../kinds/index.ts';
import { compareKubeVersions, isEstablished, MalformedCrdError, resourceTypeOfCrd } from './crd.ts';

const established = {
  conditions: [
    { type: 'NamesAccepted', status: 'True' },
    { type: 'Established', status: 'True' },
  ],
};

function version(name: string, fields: Partial<CustomResourceDefinitionVersion> = {}) {
  return {
    name,
    served: true,
    storage: false,
    schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
    ...fields,
  };
}

function crd(fields: { versions?: CustomResourceDefinitionVersion[]; scope?: string } = {}) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'websites.example.com' },
    spec: {
      group: 'example.com',
      scope: fields.scope ?? 'Namespaced',
      names: { plural: 'websites', singular: 'website', kind: 'Website', shortNames: ['ws'] },
      versions: fields.versions ?? [version('v1', { storage: true })],
    },
    status: established,
  } satisfies CustomResourceDefinition;
}

function malformedReason(object: unknown): string {
  try {
    resourceTypeOfCrd(object as CustomResourceDefinition);
  } catch (error) {
    if (error instanceof MalformedCrdError) return error.reason;
    throw error;
  }
  throw new Error('expected a MalformedCrdError');
}

describe('resourceTypeOfCrd', () => {
  it('is the storage version with the names, scope and status subresource of the CRD, as a custom resource', () => {
    const type = resourceTypeOfCrd(
      crd({
        versions: [version('v1', { storage: true, subresources: { status: {} } }), version('v2alpha1')],
      }),
    );
    expect(type).toEqual({
      group: 'example.com',
      version: 'v1',
      kind: 'Website',
      plural: 'websites',
      singular: 'website',
      namespaced: true,
      shortNames: ['ws'],
      statusSubresource: true,
      generation: true,
      requireResourceVersionOnUpdate: true,
    });
    expect(Object.isFrozen(type)).toBe(true);
  });

  it('follows the storage version when it moves, and reads the status subresource of that version', () => {
    const type = resourceTypeOfCrd(
      crd({
        versions: [version('v1', { subresources: { status: {} } }), version('v2', { storage: true })],
        scope: 'Cluster',
      }),
    );
    expect(type).toMatchObject({ version: 'v2', statusSubresource: false, namespaced: false });
  });

  it('serves the most preferred served version when the storage version is not served', () => {
    const type = resourceTypeOfCrd(
      crd({
        versions: [
          version('v1alpha1', { storage: true, served: false }),
          version('v1beta1'),
          version('v1beta2'),
          version('v1alpha2'),
        ],
      }),
    );
    expect(type.version).toBe('v1beta2');
  });

  it('defaults the singular to the kind in lower case and the short names to none', () => {
    const base = crd();
    const type = resourceTypeOfCrd({
      ...base,
      spec: { ...base.spec, names: { plural: 'websites', kind: 'Website' } },
    });
    expect(type).toMatchObject({ singular: 'website', shortNames: [] });
  });

  it('names what is wrong with a malformed CRD', () => {
    const base = crd();
    expect(malformedReason({ metadata: { name: 'x' } })).toBe('it has no spec');
    expect(malformedReason({ ...base, metadata: { name: 'sites.example.com' } })).toMatch(
      /not websites\.example\.com/,
    );
    expect(malformedReason({ ...base, spec: { ...base.spec, scope: 'Galaxy' } })).toMatch(/spec\.scope/);
    expect(malformedReason(crd({ versions: [version('v1'), version('v2')] }))).toMatch(/0 storage versions/);
    expect(
      malformedReason(
        crd({
          versions: [version('v1', { storage: true, served: false }), version('v2', { served: false })],
        }),
      ),
    ).toMatch(/no version .* is served/);
    expect(malformedReason(crd({ versions: [version('V1!', { storage: true })] }))).toMatch(/DNS label/);
    expect(
      malformedReason({ ...base, spec: { ...base.spec, names: { plural: 'websites', kind: 'website' } } }),
    ).toMatch(/PascalCase/);
  });

  it('throws only MalformedCrdError, whatever the object (property)', () => {
    const json = fc.oneof(fc.anything(), fc.constant(undefined), fc.constant(null));
    /** Mostly a value of `arb`, sometimes any JSON at all. */
    const maybe = <T>(arb: fc.Arbitrary<T>) =>
      fc.oneof({ arbitrary: arb, weight: 12 }, { arbitrary: json, weight: 1 });
    /** Mostly `good`, sometimes one of `bad`. */
    const mostly = <T>(good: T, ...bad: T[]) =>
      maybe(
        fc.oneof(
          { arbitrary: fc.constant(good), weight: 4 },
          { arbitrary: fc.constantFrom(...bad), weight: 1 },
        ),
      );
    const versionArb = fc.record({
      name: maybe(fc.constantFrom('v1', 'v2', 'v1beta1', 'v10alpha3', 'weird', '', 'V1')),
      served: maybe(fc.boolean()),
      storage: maybe(fc.boolean()),
      subresources: maybe(fc.record({ status: maybe(fc.constant({})) })),
    });
    const crdArb = fc.record({
      metadata: maybe(fc.record({ name: mostly('websites.example.com', 'x', '') })),
      spec: maybe(
        fc.record({
          group: mostly('example.com', ''),
          scope: mostly('Namespaced', 'Cluster', 'namespaced'),
          names: maybe(
            fc.record({
              plural: mostly('websites', 'Web Sites', ''),
              kind: mostly('Website', 'website', ''),
              singular: mostly('website', ''),
              shortNames: maybe(fc.array(mostly('ws', '', 'w'), { maxLength: 2 })),
            }),
          ),
          versions: maybe(fc.array(maybe(versionArb), { minLength: 1, maxLength: 2 })),
        }),
      ),
      status: maybe(fc.constant(established)),
    });
    let served = 0;
    fc.assert(
      fc.property(maybe(crdArb), (object) => {
        try {
          const type = resourceTypeOfCrd(object as CustomResourceDefinition);
          served++;
          expect(`${type.plural}.${type.group}`).toBe((object as CustomResourceDefinition).metadata.name);
        } catch (error) {
          expect(error).toBeInstanceOf(MalformedCrdError);
          expect(isConvergeError(error) && error.code).toBe('CONVERGE_ERR_DYNAMIC_CRD_MALFORMED');
        }
        expect(() => isEstablished(object as CustomResourceDefinition)).not.toThrow();
      }),
      { numRuns: 2_000 },
    );
    // The generator reaches well-formed CRDs too, so the property is not only about rejections.
    expect(served).toBeGreaterThan(0);
  });
});

describe('isEstablished', () => {
  const withConditions = (conditions: unknown) =>
    ({ ...crd(), status: { conditions } }) as CustomResourceDefinition;

  it('is true when Established is True and NamesAccepted is not False', () => {
    expect(isEstablished(crd())).toBe(true);
    expect(isEstablished(withConditions([{ type: 'Established', status: 'True' }]))).toBe(true);
  });

  it('is false before the API server established the CRD, or when its names were not accepted', () => {
    expect(isEstablished({ ...crd(), status: {} })).toBe(false);
    expect(isEstablished(withConditions([{ type: 'Established', status: 'False' }]))).toBe(false);
    expect(
      isEstablished(
        withConditions([
          { type: 'Established', status: 'True' },
          { type: 'NamesAccepted', status: 'False' },
        ]),
      ),
    ).toBe(false);
    expect(isEstablished(withConditions('Established'))).toBe(false);
  });

  it('stays true while a deleted CRD is terminating (its objects still need their finalizers handled)', () => {
    expect(
      isEstablished(
        withConditions([
          { type: 'Established', status: 'True' },
          { type: 'Terminating', status: 'True' },
        ]),
      ),
    ).toBe(true);
  });
});

describe('compareKubeVersions', () => {
  it('orders versions as Kubernetes discovery prefers them', () => {
    const versions = ['v1alpha1', 'foo', 'v2', 'v1beta1', 'v10', 'v1', 'v11alpha2', 'v1beta2', 'bar'];
    expect(versions.sort(compareKubeVersions)).toEqual([
      'v10',
      'v2',
      'v1',
      'v1beta2',
      'v1beta1',
      'v11alpha2',
      'v1alpha1',
      'bar',
      'foo',
    ]);
  });
});
