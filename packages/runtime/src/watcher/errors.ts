import { ConvergeError, describe, ErrorCodes } from '../errors.ts';

/**
 * The same informer (event source) was added twice for one kind (grafana app-sdk's
 * `ErrInformerAlreadyAdded`). Several different informers per kind are fine; one informer added
 * twice would deliver every event twice.
 */
export class InformerAlreadyAddedError extends ConvergeError {
  /** The kind it was added for. */
  readonly kind: string;

  constructor(kind: string) {
    super(
      ErrorCodes.WATCHER_INFORMER_ALREADY_ADDED,
      `this informer was already added for kind ${JSON.stringify(kind)}`,
    );
    this.kind = kind;
  }
}

/**
 * An event reconciler returned something that is not a `ReconcileResult` (an object whose
 * `requeueAfterMs`, if any, is a finite number >= 0) or nothing. Handled like a thrown error:
 * reported and retried through the retry policy.
 */
export class InvalidReconcileResultError extends ConvergeError {
  readonly value: unknown;

  constructor(value: unknown) {
    super(
      ErrorCodes.WATCHER_INVALID_RESULT,
      `event reconciler returned ${describe(value)}; return nothing, {}, { state } or { requeueAfterMs, state }`,
    );
    this.value = value;
  }
}
