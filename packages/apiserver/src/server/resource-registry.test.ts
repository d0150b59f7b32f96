import { describe, expect, it } from 'vitest';
import { builtinResources } from './builtin-resources.ts';
import { compareKubeVersions, ResourceRegistry } from './resource-registry.ts';

describe('resource registry', () => {
  it('orders versions as Kubernetes prefers them', () => {
    const versions = ['v1alpha1', 'foo', 'v1beta2', 'v2', 'v1', 'v1beta1', 'v10', 'bar'];
    expect([...versions].sort(compareKubeVersions)).toEqual([
      'v10',
      'v2',
      'v1',
      'v1beta2',
      'v1beta1',
      'v1alpha1',
      'bar',
      'foo',
    ]);
  });

  it('serves what each owner registered, lists the core group first, and bumps its generation on change', () => {
    const registry = new ResourceRegistry();
    const { resources } = builtinResources();
    registry.set('builtin', resources);
    const generation = registry.generation;
    expect(registry.groups()[0]?.name).toBe('');
    expect(registry.lookup('apps', 'v1', 'deployments')?.kind).toBe('Deployment');
    expect(registry.byKind('coordination.k8s.io', 'v1', 'Lease')?.plural).toBe('leases');
    const widgets = {
      ...resources[0],
      group: 'example.com',
      version: 'v1',
      plural: 'widgets',
      kind: 'Widget',
    } as (typeof resources)[number];
    registry.set('crd:widgets.example.com', [widgets]);
    expect(registry.generation).toBeGreaterThan(generation);
    expect(registry.hasGroupVersion('example.com', 'v1')).toBe(true);
    registry.remove('crd:widgets.example.com');
    expect(registry.lookup('example.com', 'v1', 'widgets')).toBeUndefined();
    expect(registry.lookup('', 'v1', 'configmaps')).toBeDefined();
  });
});
