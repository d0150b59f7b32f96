import { validateCustomResource } from '@converge/apiserver';
import { crdsOf, kindOf } from '@converge/kube';
import {
  type CustomResourceDefinition,
  InvalidError,
  type KubeObject,
  type ResourceType,
} from '@converge/runtime';

/**
 * The API server's write strategy for custom resources, as the embedded server applies it: the
 * CRD that `converge dev` would install for a kind made with `defineKind`, and each write through
 * it — unknown fields pruned, `default`s applied, the schema and its `x-kubernetes-validations`
 * rules checked (422 Invalid with kube's causes and message). Built-in kinds and types made
 * otherwise pass unchanged.
 */
export class CrdStrategies {
  /**
   * One CRD object per type for every run of the process: the server's compiled schemas and
   * rules are cached by the CRD object, so seeds share them.
   */
  static readonly #crds = new WeakMap<ResourceType, CustomResourceDefinition | null>();

  /** The CRD of a kind declared with `defineKind`, or undefined. */
  crdOf(type: ResourceType): CustomResourceDefinition | undefined {
    let crd = CrdStrategies.#crds.get(type);
    if (crd === undefined) {
      const kind = kindOf(type);
      crd = (kind === undefined ? undefined : crdsOf([kind])[0]) ?? null;
      CrdStrategies.#crds.set(type, crd);
    }
    return crd ?? undefined;
  }

  /** The object as the server would store it, or an InvalidError as it would answer. */
  admit<T extends KubeObject>(type: ResourceType, object: T, old?: KubeObject): T {
    const crd = this.crdOf(type);
    if (crd === undefined) return object;
    const result = validateCustomResource(crd, object, old === undefined ? {} : { oldObject: old });
    if (result.message !== undefined) {
      throw new InvalidError(result.message, {
        details: {
          name: object.metadata.name ?? '',
          group: type.group,
          kind: type.kind,
          causes: result.causes,
        },
      });
    }
    return result.object as T;
  }
}
