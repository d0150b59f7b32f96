/** Where an error carries the state for the retry of the reconcile that threw it. */
const STATE = Symbol.for('converge.watcher.reconcileState');

/**
 * Returns `error` carrying `state` for the retry of the reconcile that throws it (what app-sdk
 * expresses by returning a `ReconcileResult` with `State` together with an error): the retried
 * request's `state` is `state`. An error thrown without it leaves the request's state as it was.
 *
 * @example
 * try { await provision(request.object); }
 * catch (error) { throw withReconcileState(error as Error, { step: 'provisioned-db' }); }
 */
export function withReconcileState<E extends Error>(error: E, state: unknown): E {
  Object.defineProperty(error, STATE, {
    value: state,
    configurable: true,
    enumerable: false,
    writable: true,
  });
  return error;
}

/** Whether `error` carries a state for its retry ({@link withReconcileState}), and which. */
export function reconcileStateOf(error: unknown): { readonly carried: boolean; readonly state: unknown } {
  if ((typeof error !== 'object' && typeof error !== 'function') || error === null || !(STATE in error)) {
    return { carried: false, state: undefined };
  }
  return { carried: true, state: (error as { [STATE]: unknown })[STATE] };
}
