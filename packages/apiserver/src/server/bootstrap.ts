import { type Clock, isAlreadyExists, isNotFound, type ResourceType } from '@converge/runtime';
import type { Store } from '@converge/store';
import type { MutableObject } from './api-resource.ts';
import { builtinResources } from './builtin-resources.ts';
import type { ResourceRegistry } from './resource-registry.ts';
import { namespaceStrategy } from './strategies-core.ts';

/** The namespaces every cluster starts with. */
export const SYSTEM_NAMESPACES: readonly string[] = [
  'default',
  'kube-system',
  'kube-public',
  'kube-node-lease',
];

/** The store types the server needs to find by kind. */
export interface BuiltinTypes {
  readonly namespace: ResourceType;
  readonly crd: ResourceType;
}

function find(types: readonly ResourceType[], group: string, kind: string): ResourceType {
  const type = types.find((t) => t.group === group && t.kind === kind);
  if (type === undefined) throw new Error(`built-in type ${group}/${kind} is missing`);
  return type;
}

/**
 * Registers the built-in kinds in the store and the registry, then creates the system namespaces
 * that are missing (labelled and Active, as the namespace strategy makes them).
 */
export async function bootstrap(
  store: Store,
  registry: ResourceRegistry,
  clock: Clock,
): Promise<BuiltinTypes> {
  const { storeTypes, resources } = builtinResources();
  const registered = storeTypes.map((type) => store.registerType(type));
  const byId = new Map(registered.map((t) => [`${t.group}/${t.version}/${t.plural}`, t]));
  registry.set(
    'builtin',
    resources.map((r) => ({
      ...r,
      storage: byId.get(`${r.storage.group}/${r.storage.version}/${r.storage.plural}`) ?? r.storage,
    })),
  );
  const namespace = find(registered, '', 'Namespace');
  for (const name of SYSTEM_NAMESPACES) {
    try {
      await store.get(namespace, { namespace: '', name });
      continue;
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    const object: MutableObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
    namespaceStrategy.prepareForCreate?.(object, {
      namespace: '',
      fieldValidation: 'Ignore',
      warn: () => undefined,
      now: () => clock.now(),
      random: () => clock.random(),
    });
    try {
      await store.create(namespace, object);
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
    }
  }
  return { namespace, crd: find(registered, 'apiextensions.k8s.io', 'CustomResourceDefinition') };
}
