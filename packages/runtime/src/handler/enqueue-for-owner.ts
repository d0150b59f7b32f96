import { OptionsError } from '../errors.ts';
import type { KubeObject, ObjectKey, OwnerReference } from '../object/index.ts';
import type { EventHandler } from './handler.ts';
import { addOptionsFor, type EnqueueHandlerOptions, priorityOption } from './priority.ts';

/** The owner type: its kind and either its apiVersion or its group (only the group is compared). */
export type OwnerType =
  | { readonly ownerKind: string; readonly ownerApiVersion: string; readonly ownerGroup?: never }
  | { readonly ownerKind: string; readonly ownerGroup: string; readonly ownerApiVersion?: never };

export type EnqueueForOwnerOptions = OwnerType &
  EnqueueHandlerOptions & {
    /** Only follow the owner reference with `controller: true`. Default false (every matching owner). */
    readonly onlyController?: boolean;
    /**
     * The owner kind is cluster-scoped: requests get namespace ''. Default false: the owner lives in
     * the object's namespace (owner references cannot cross namespaces).
     */
    readonly ownerClusterScoped?: boolean;
  };

/**
 * Enqueues the owners of the event's object (controller-runtime's `EnqueueRequestForOwner`): for
 * every entry of `metadata.ownerReferences` whose kind is `ownerKind` and whose apiVersion has the
 * owner's group (the version is ignored), the request `{ namespace: object's namespace, name:
 * ref.name }`. With `onlyController`, only the first reference marked `controller: true` is
 * considered, and nothing is enqueued if it is of another kind. Updates enqueue the owners of the old
 * and the new object, once each, so an object that changed owner wakes both. References with an
 * unparseable apiVersion (more than one `/`) are skipped.
 *
 * Initial-list creates and resync updates are added at low priority unless `priority` is given.
 * The causes are the event's, marked `secondary` ({@link eventCause}).
 *
 * @example
 * // Reconcile the Deployment that controls a changed ReplicaSet.
 * const handler = enqueueForOwner({ ownerKind: 'Deployment', ownerGroup: 'apps', onlyController: true });
 */
export function enqueueForOwner<T extends Pick<KubeObject, 'metadata'>>(
  options: EnqueueForOwnerOptions,
): EventHandler<T, ObjectKey> {
  const { kind, group } = ownerTypeOf(options);
  const onlyController = booleanOption('onlyController', options.onlyController);
  const clusterScoped = booleanOption('ownerClusterScoped', options.ownerClusterScoped);
  const fixed = priorityOption(options.priority);

  const collect = (object: T, into: Map<string, ObjectKey>): void => {
    const namespace = clusterScoped ? '' : (object.metadata.namespace ?? '');
    for (const ref of referencesOf(object, onlyController)) {
      if (ref.kind !== kind || groupOfRef(ref.apiVersion) !== group) continue;
      into.set(`${namespace}/${ref.name}`, { namespace, name: ref.name });
    }
  };

  return {
    handle(event, queue): void {
      const owners = new Map<string, ObjectKey>();
      if (event.type === 'update') collect(event.oldObject, owners);
      collect(event.object, owners);
      const addOptions = addOptionsFor(event, fixed, true, queue);
      for (const owner of owners.values()) queue.add(owner, addOptions);
    },
  };
}

function referencesOf(
  object: Pick<KubeObject, 'metadata'>,
  onlyController: boolean,
): readonly OwnerReference[] {
  const refs = object.metadata.ownerReferences ?? [];
  if (!onlyController) return refs;
  const controller = refs.find((ref) => ref.controller === true);
  return controller === undefined ? [] : [controller];
}

/** The group of an owner reference's apiVersion, or undefined when it is not `version` or `group/version`. */
function groupOfRef(apiVersion: string): string | undefined {
  const parts = apiVersion.split('/');
  if (parts.length === 1) return '';
  return parts.length === 2 ? parts[0] : undefined;
}

function ownerTypeOf(options: EnqueueForOwnerOptions): { kind: string; group: string } {
  if (typeof options !== 'object' || options === null) {
    throw new OptionsError('options', options, 'an object with ownerKind and ownerApiVersion or ownerGroup');
  }
  const { ownerKind, ownerApiVersion, ownerGroup } = options;
  if (typeof ownerKind !== 'string' || ownerKind.length === 0) {
    throw new OptionsError('ownerKind', ownerKind, 'a non-empty string');
  }
  if ((ownerApiVersion === undefined) === (ownerGroup === undefined)) {
    throw new OptionsError(
      'ownerApiVersion',
      ownerApiVersion,
      'exactly one of ownerApiVersion and ownerGroup',
    );
  }
  if (ownerApiVersion !== undefined) {
    const group =
      typeof ownerApiVersion === 'string' && ownerApiVersion.length > 0
        ? groupOfRef(ownerApiVersion)
        : undefined;
    if (group === undefined) {
      throw new OptionsError('ownerApiVersion', ownerApiVersion, "an apiVersion like 'v1' or 'apps/v1'");
    }
    return { kind: ownerKind, group };
  }
  if (typeof ownerGroup !== 'string' || ownerGroup.includes('/')) {
    throw new OptionsError('ownerGroup', ownerGroup, "a group name without '/' ('' for the core group)");
  }
  return { kind: ownerKind, group: ownerGroup };
}

function booleanOption(field: string, value: boolean | undefined): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new OptionsError(field, value, 'a boolean');
  return value;
}
