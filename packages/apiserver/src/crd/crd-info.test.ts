import { describe, expect, it } from 'vitest';
import { compareKubeVersions, crdInfo, resourceTypesOf } from './crd-info.ts';
import { CrdDecodeError, CrdInvalidError } from './errors.ts';
import { databaseCrd, variant, websiteCrd, websiteSchema } from './testdata/crds.ts';

describe('crdInfo', () => {
  it('describes the Website CRD with defaults filled in', () => {
    const info = crdInfo(websiteCrd);
    expect(info.names).toEqual({
      plural: 'websites',
      singular: 'website',
      kind: 'Website',
      listKind: 'WebsiteList',
      shortNames: ['ws'],
      categories: ['all'],
    });
    expect(info.scope).toBe('Namespaced');
    expect(info.storageVersion).toBe('v1');
    const v1 = info.versions[0];
    expect(v1?.schema).toBe(websiteSchema);
    expect(v1?.statusSubresource).toBe(true);
    expect(v1?.scale).toEqual({
      specReplicasPath: '.spec.replicas',
      statusReplicasPath: '.status.replicas',
      labelSelectorPath: '.status.selector',
    });
    expect(v1?.printerColumns.map((c) => `${c.name}:${c.priority}`)).toEqual([
      'Domain:0',
      'Replicas:0',
      'Ready:0',
      'Tier:1',
      'Age:0',
    ]);
    expect(v1?.selectableFields).toEqual(['.spec.tier']);
  });

  it('lists versions in Kubernetes priority order', () => {
    expect(crdInfo(databaseCrd).versions.map((v) => [v.name, v.storage, v.deprecated])).toEqual([
      ['v1', true, false],
      ['v1beta1', false, true],
    ]);
  });

  it('throws typed errors for CRDs it cannot serve', () => {
    expect(() => crdInfo(variant(websiteCrd, (d) => (d.spec.versions[0].storage = false)))).toThrow(
      CrdInvalidError,
    );
    expect(() => crdInfo(variant(websiteCrd, (d) => (d.spec = 'x')))).toThrow(CrdDecodeError);
  });
});

describe('compareKubeVersions', () => {
  it('orders GA, then beta, then alpha, higher first, and other names last alphabetically', () => {
    const versions = [
      'foo10',
      'v1alpha1',
      'v11alpha2',
      'v1',
      'v2',
      'v1beta1',
      'v10beta3',
      'foo1',
      'v12alpha1',
      'v3beta1',
      'v10',
    ];
    expect(versions.sort(compareKubeVersions)).toEqual([
      'v10',
      'v2',
      'v1',
      'v10beta3',
      'v3beta1',
      'v1beta1',
      'v12alpha1',
      'v11alpha2',
      'v1alpha1',
      'foo1',
      'foo10',
    ]);
  });
});

describe('resourceTypesOf', () => {
  it('registers one type per served version with custom-resource semantics', () => {
    expect(resourceTypesOf(websiteCrd)).toEqual([
      {
        group: 'example.com',
        version: 'v1',
        kind: 'Website',
        plural: 'websites',
        namespaced: true,
        singular: 'website',
        shortNames: ['ws'],
        statusSubresource: true,
        generation: true,
        requireResourceVersionOnUpdate: true,
      },
    ]);
  });

  it('skips versions that are not served and knows cluster scope', () => {
    const crd = variant(databaseCrd, (d) => (d.spec.versions[0].served = false));
    expect(resourceTypesOf(crd).map((t) => [t.version, t.namespaced, t.statusSubresource])).toEqual([
      ['v1', false, true],
    ]);
  });
});
