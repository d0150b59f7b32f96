import { OptionsError } from '../errors.ts';
import {
  type EnqueueHandlerOptions,
  type EventHandler,
  eventCause,
  eventPriority,
} from '../handler/index.ts';
import type { KubeObject, ObjectKey } from '../object/index.ts';
import { type OwnerLabelScheme, resolveOwnerLabelScheme } from './owner-label-scheme.ts';
import { checkOwnerKind, type OwnerKind, ownerOf, recordsKind } from './owner-labels.ts';

/** Options of {@link enqueueForLabelOwner}. */
export interface EnqueueForLabelOwnerOptions extends EnqueueHandlerOptions {
  /** The owner's kind (a ResourceType works): only objects owned by this kind are mapped. */
  readonly ownerType: OwnerKind;
  /** Where objects record their owner. Default `convergeOwnerLabels`. */
  readonly ownerLabels?: OwnerLabelScheme;
}

/**
 * Enqueues the owner an object records in its owner labels (see `ownerLabels`): the
 * cross-backend counterpart of `enqueueForOwner`. The owner's key comes from the annotations when
 * present, else from the labels when they were not hashed. Objects without owner labels, owned by
 * another kind, or whose labels cannot be decoded are ignored. Updates enqueue the owners of the
 * old and the new object, once each, so an object that changed owner wakes both.
 *
 * Initial-list creates and resync updates are added at low priority unless `priority` is given.
 *
 * @example
 * // ConfigMaps in Kubernetes wake the NATS-stored Website that owns them.
 * const handler = enqueueForLabelOwner({ ownerType: websiteType });
 * // Objects a Kumori controller labelled (`kumori/ownerkind`, `kumori/ownerkey`).
 * const kumori = enqueueForLabelOwner({ ownerType: applicationType, ownerLabels: kumoriOwnerLabels });
 */
export function enqueueForLabelOwner<T extends KubeObject>(
  options: EnqueueForLabelOwnerOptions,
): EventHandler<T, ObjectKey> {
  if (typeof options !== 'object' || options === null) {
    throw new OptionsError('options', options, 'an object with ownerType');
  }
  const ownerType = checkOwnerKind(options.ownerType);
  const scheme = resolveOwnerLabelScheme(options.ownerLabels);
  const fixed = options.priority;
  if (fixed !== undefined && (typeof fixed !== 'number' || !Number.isFinite(fixed))) {
    throw new OptionsError('priority', fixed, 'a finite number');
  }

  const collect = (object: T, into: Map<string, ObjectKey>): void => {
    const owner = ownerOf(object, scheme);
    if (owner === undefined || !recordsKind(owner, ownerType)) return;
    into.set(`${owner.key.namespace}/${owner.key.name}`, owner.key);
  };

  return {
    handle(event, queue): void {
      const owners = new Map<string, ObjectKey>();
      if (event.type === 'update') collect(event.oldObject, owners);
      collect(event.object, owners);
      const priority = fixed ?? eventPriority(event);
      const cause = eventCause(event, { secondary: true });
      for (const owner of owners.values()) {
        queue.add(owner, priority === undefined ? { cause } : { priority, cause });
      }
    },
  };
}
