import { OptionsError } from '../errors.ts';
import type { KubeObject } from '../object/index.ts';
import { InvalidReconcileResultError } from './errors.ts';
import type { EventReconciler, ResourceAction, ResourceWatcher, WatcherContext } from './types.ts';

/** A handler as the controller holds it: a watcher or a reconciler, with a stable identity. */
export type Handler =
  | { readonly type: 'watcher'; readonly target: ResourceWatcher }
  | { readonly type: 'reconciler'; readonly target: EventReconciler };

/** One call of a handler, kept whole so a retry makes exactly the same call. */
export interface Call {
  readonly action: ResourceAction;
  readonly object: KubeObject;
  /** The old object of an update or resync. */
  readonly oldObject: KubeObject | undefined;
  /** 0 for the event's call, n for its n-th retry; a requeue keeps it. */
  readonly attempt: number;
  /** What the reconciler's previous attempt of this request returned as `state`. */
  readonly state: unknown;
}

/** What a call settled with, once its return value is understood. */
export type CallOutcome =
  | { readonly ok: true; readonly requeueAfterMs: number | undefined; readonly state: unknown }
  | { readonly ok: false; readonly error: unknown };

const WATCHER_METHODS = ['add', 'update', 'delete', 'sync'] as const;

/** Checks what `addWatcher` was given. */
export function checkWatcher(watcher: unknown): asserts watcher is ResourceWatcher {
  if (typeof watcher !== 'object' || watcher === null) {
    throw new OptionsError('watcher', watcher, 'a ResourceWatcher object');
  }
  for (const method of WATCHER_METHODS) {
    const value = (watcher as Record<string, unknown>)[method];
    if (value !== undefined && typeof value !== 'function') {
      throw new OptionsError(`watcher.${method}`, value, 'a function or undefined');
    }
  }
}

/** Checks what `addReconciler` was given. */
export function checkReconciler(reconciler: unknown): asserts reconciler is EventReconciler {
  if (
    typeof reconciler !== 'object' ||
    reconciler === null ||
    typeof (reconciler as { reconcile?: unknown }).reconcile !== 'function'
  ) {
    throw new OptionsError('reconciler', reconciler, 'an EventReconciler with a reconcile() method');
  }
}

/**
 * Makes the call: create → `add`, update and resync → `update(old, new)`, delete → `delete` for a
 * watcher (a missing method succeeds); `reconcile({ action, object, state })` for a reconciler.
 * Never throws: what the handler throws, synchronously or not, is the outcome's error.
 */
export async function invoke(handler: Handler, call: Call, context: WatcherContext): Promise<CallOutcome> {
  let value: unknown;
  try {
    value = await new Promise<unknown>((resolve) => resolve(start(handler, call, context)));
  } catch (error) {
    return { ok: false, error };
  }
  if (handler.type === 'watcher') return { ok: true, requeueAfterMs: undefined, state: undefined };
  return reconcileOutcome(value, call.state);
}

function start(handler: Handler, call: Call, context: WatcherContext): unknown {
  if (handler.type === 'reconciler') {
    return handler.target.reconcile({ action: call.action, object: call.object, state: call.state }, context);
  }
  const watcher = handler.target;
  switch (call.action) {
    case 'create':
      return watcher.add?.(call.object, context);
    case 'update':
    case 'resync':
      return watcher.update?.(call.oldObject ?? call.object, call.object, context);
    case 'delete':
      return watcher.delete?.(call.object, context);
  }
}

/** A reconciler's return value: nothing, or `{ requeueAfterMs?, state? }`. State not returned is kept. */
function reconcileOutcome(value: unknown, previousState: unknown): CallOutcome {
  if (value === undefined || value === null) return { ok: true, requeueAfterMs: undefined, state: undefined };
  if (typeof value !== 'object') return { ok: false, error: new InvalidReconcileResultError(value) };
  const { requeueAfterMs, state } = value as { requeueAfterMs?: unknown; state?: unknown };
  if (
    requeueAfterMs !== undefined &&
    (typeof requeueAfterMs !== 'number' || !Number.isFinite(requeueAfterMs) || requeueAfterMs < 0)
  ) {
    return { ok: false, error: new InvalidReconcileResultError(value) };
  }
  return {
    ok: true,
    requeueAfterMs: requeueAfterMs as number | undefined,
    state: state === undefined ? previousState : state,
  };
}
