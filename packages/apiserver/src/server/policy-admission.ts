import { isNotFound, type Logger, type ResourceType } from '@converge/runtime';
import type { Store } from '@converge/store';
import { type JsonObject, type ParamSource, PolicyAdmission } from '../admission/index.ts';
import type { ApiResource } from './api-resource.ts';
import { toResponse } from './object-io.ts';
import type { ResourceRegistry } from './resource-registry.ts';

const GROUP = 'admissionregistration.k8s.io';

/** The objects of `resource` in `namespace` ('' for all), as it serves them. */
async function listServed(store: Store, resource: ApiResource, namespace: string): Promise<JsonObject[]> {
  const page = await store.list(resource.storage, namespace === '' ? {} : { namespace });
  return (await Promise.all(page.items.map((item) => toResponse(resource, item)))) as JsonObject[];
}

/**
 * ValidatingAdmissionPolicy admission over a server's store: policies, bindings, namespaces and
 * params read from it, params in the version the policy's `paramKind` names. Also returns the two
 * resources whose changes must invalidate the policy cache.
 */
export function policyAdmission(
  store: Store,
  registry: ResourceRegistry,
  namespaceType: ResourceType,
  logger: Logger,
): { admission: PolicyAdmission; kinds: readonly ApiResource[] } {
  const lookup = (plural: string): ApiResource | undefined => registry.lookup(GROUP, 'v1', plural);
  const list = async (plural: string): Promise<readonly JsonObject[]> => {
    const resource = lookup(plural);
    return resource === undefined ? [] : listServed(store, resource, '');
  };
  const params = (apiVersion: string, kind: string): ParamSource | undefined => {
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    const resource = registry.byKind(group, version, kind);
    if (resource === undefined) return undefined;
    return {
      namespaced: resource.namespaced,
      async get(namespace, name) {
        try {
          return (await toResponse(
            resource,
            await store.get(resource.storage, { namespace, name }),
          )) as JsonObject;
        } catch (error) {
          if (isNotFound(error)) return undefined;
          throw error;
        }
      },
      list: (namespace) => listServed(store, resource, namespace),
    };
  };
  const admission = new PolicyAdmission({
    listPolicies: () => list('validatingadmissionpolicies'),
    listBindings: () => list('validatingadmissionpolicybindings'),
    namespace: async (name) => {
      try {
        return (await store.get(namespaceType, { namespace: '', name })) as unknown as JsonObject;
      } catch (error) {
        if (isNotFound(error)) return null;
        throw error;
      }
    },
    params,
    logger: logger.child({ component: 'admission-policy' }),
  });
  const kinds = ['validatingadmissionpolicies', 'validatingadmissionpolicybindings']
    .map(lookup)
    .filter((r): r is ApiResource => r !== undefined);
  return { admission, kinds };
}
