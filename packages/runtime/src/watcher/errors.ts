import { ConvergeError, type ConvergeErrorOptions, describe, ErrorCodes } from '../errors.ts';

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

/**
 * A finalizer name — given as `finalizer` / `inProgressFinalizer` or returned by a supplier — that
 * Kubernetes would reject in `metadata.finalizers` (not a qualified name: empty, a name part longer
 * than 63 characters, characters outside alphanumerics, '-', '_' and '.'), or a supplier that threw.
 * Thrown by the opinionated watcher's and reconciler's constructors, never later.
 */
export class InvalidFinalizerError extends ConvergeError {
  /** The option that named it (`finalizer`, `inProgressFinalizer`). */
  readonly option: string;
  /** The name given or supplied (undefined when the supplier threw). */
  readonly finalizer: unknown;
  /** What is wrong with it. */
  readonly reason: string;

  constructor(option: string, finalizer: unknown, reason: string, options?: ConvergeErrorOptions) {
    super(
      ErrorCodes.WATCHER_INVALID_FINALIZER,
      `invalid ${option} ${describe(finalizer)}: ${reason}; pass a shorter, domain-qualified name such as "example.com/cleanup"`,
      options,
    );
    this.option = option;
    this.finalizer = finalizer;
    this.reason = reason;
  }
}

/**
 * Adding, replacing or removing the opinionated watcher's (or reconciler's) finalizer failed: the
 * patch, or the read after a conflict, failed with `cause`, or the object kept changing through
 * every conflict retry. The handler that ran before is not undone; the call is retried by the
 * controller's retry policy like any handler error.
 */
export class FinalizerPatchError extends ConvergeError {
  readonly operation: 'add' | 'replace' | 'remove';
  readonly finalizer: string;
  /** The object's key (namespace '' when cluster-scoped). */
  readonly key: { readonly namespace: string; readonly name: string };

  constructor(
    operation: 'add' | 'replace' | 'remove',
    finalizer: string,
    key: { readonly namespace: string; readonly name: string },
    options?: ConvergeErrorOptions,
  ) {
    const object = key.namespace === '' ? key.name : `${key.namespace}/${key.name}`;
    const cause = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super(
      ErrorCodes.WATCHER_FINALIZER_PATCH_FAILED,
      `${operation === 'remove' ? 'removing' : operation === 'add' ? 'adding' : 'replacing'} finalizer ${JSON.stringify(finalizer)} of ${object} failed${cause}`,
      options,
    );
    this.operation = operation;
    this.finalizer = finalizer;
    this.key = { namespace: key.namespace, name: key.name };
  }
}
