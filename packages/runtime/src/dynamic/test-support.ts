import { type ResourceType, resourceType } from '../backend/index.ts';
import type { KubeObject } from '../object/index.ts';
import { FakeBackend, VirtualClock } from '../testing/index.ts';
import { DynamicController, type DynamicControllerOptions } from './dynamic-controller.ts';
import type { KindRequest } from './types.ts';

/** Shared fixtures of the dynamic controller tests (not part of the public API). */

/** A namespaced custom kind `Widget<n>` in group `example.com`. */
export function widgetKind(n: number | string, version = 'v1'): ResourceType {
  return resourceType({
    group: 'example.com',
    version,
    kind: `Widget${n}`,
    plural: `widget${n}s`,
    namespaced: true,
  });
}

export const clusterKind: ResourceType = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Gadget',
  plural: 'gadgets',
  namespaced: false,
});

export function object(type: ResourceType, name: string, namespace = 'default', generation = 1): KubeObject {
  return {
    apiVersion: `${type.group}/${type.version}`,
    kind: type.kind,
    metadata: { name, ...(type.namespaced ? { namespace } : {}), generation },
    spec: { n: generation },
  } as KubeObject;
}

export function label(request: KindRequest): string {
  return `${request.kind.resource}:${request.namespace}/${request.name}`;
}

export function setup(options: Partial<DynamicControllerOptions> = {}) {
  const clock = new VirtualClock();
  const backend = new FakeBackend({ clock });
  const stop = new AbortController();
  const controller = new DynamicController({ backend, clock, ...options });
  return { clock, backend, stop, controller };
}
