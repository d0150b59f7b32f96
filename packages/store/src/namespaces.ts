import type { StoreCore } from './core.ts';
import { encodeKey, namespaceRange } from './keys.ts';

/** The finalizer the apiserver adds on DELETE with `propagationPolicy: Foreground`. */
export const FOREGROUND_FINALIZER = 'foregroundDeletion';
/** The finalizer the apiserver adds on DELETE with `propagationPolicy: Orphan`. */
export const ORPHAN_FINALIZER = 'orphan';

/** Whether `namespace` is a Namespace object of the served core Namespace type that is being deleted. */
export function namespaceTerminating(core: StoreCore, namespace: string): boolean {
  const nsType = core.namespaceType;
  if (nsType === undefined || namespace === '') return false;
  return nsType.latest(encodeKey('', namespace))?.metadata.deletionTimestamp !== undefined;
}

/** Whether no served namespaced type holds an object in `namespace`. */
export function namespaceEmpty(core: StoreCore, namespace: string): boolean {
  const { lo, hi } = namespaceRange(namespace);
  for (const td of core.served()) {
    if (td.type.namespaced && td.liveKeys.countRange(lo, hi) > 0) return false;
  }
  return true;
}
