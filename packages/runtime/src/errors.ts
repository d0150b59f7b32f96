/**
 * Typed errors shared by every Converge package.
 *
 * Every error Converge throws is a {@link ConvergeError} with a stable `code` of the form
 * `CONVERGE_ERR_<AREA>_<PROBLEM>`. Codes are never reused. `instanceof` works across duplicate
 * installs of the package because the classes are branded with a registry symbol.
 *
 * @module
 */

const brand: unique symbol = Symbol.for('converge.error');

/** Stable error codes of the runtime package. See docs/errors.md for how to fix each. */
export const ErrorCodes = {
  /** An options object had an invalid value (negative count, NaN duration, …). */
  OPTIONS_INVALID: 'CONVERGE_ERR_OPTIONS_INVALID',
  /** A reconciler signalled that the error must not be retried. */
  RECONCILE_TERMINAL: 'CONVERGE_ERR_RECONCILE_TERMINAL',
  /** A reconcile ran past its per-reconcile timeout. */
  RECONCILE_TIMEOUT: 'CONVERGE_ERR_RECONCILE_TIMEOUT',
  /** A reconciler threw something that was not an Error (a string, a number, …). */
  RECONCILE_NON_ERROR_THROWN: 'CONVERGE_ERR_RECONCILE_NON_ERROR_THROWN',
  /** A reconciler returned a value that is not a Result made by the result constructors. */
  RECONCILE_INVALID_RESULT: 'CONVERGE_ERR_RECONCILE_INVALID_RESULT',
  /** `start()` was called on a component that is already running or has been stopped. */
  LIFECYCLE_ALREADY_STARTED: 'CONVERGE_ERR_LIFECYCLE_ALREADY_STARTED',
  /** The component was shut down; the operation cannot complete. */
  LIFECYCLE_SHUT_DOWN: 'CONVERGE_ERR_LIFECYCLE_SHUT_DOWN',
  /** Graceful shutdown did not finish within `shutdownTimeoutMs`. */
  LIFECYCLE_SHUTDOWN_TIMEOUT: 'CONVERGE_ERR_LIFECYCLE_SHUTDOWN_TIMEOUT',
  /** A source failed to sync before the controller started its workers. */
  SOURCE_SYNC_FAILED: 'CONVERGE_ERR_SOURCE_SYNC_FAILED',
  /** A source failed while the controller was running. */
  SOURCE_FAILED: 'CONVERGE_ERR_SOURCE_FAILED',
  /** A source's list function failed (the poller logs it and backs off). */
  SOURCE_LIST_FAILED: 'CONVERGE_ERR_SOURCE_LIST_FAILED',
  /** A source's list call did not settle within its `timeoutMs` (handled like a failed list). */
  SOURCE_LIST_TIMEOUT: 'CONVERGE_ERR_SOURCE_LIST_TIMEOUT',
  /** A source's list returned two items with the same key (handled like a failed list). */
  SOURCE_DUPLICATE_KEY: 'CONVERGE_ERR_SOURCE_DUPLICATE_KEY',
  /** A reconcile was abandoned: it kept running past its abort signal and grace period. */
  RECONCILE_ABANDONED: 'CONVERGE_ERR_RECONCILE_ABANDONED',
  /** A reconciler asked (by throwing) for its request to be requeued after a delay. */
  RECONCILE_REQUEUE_AFTER: 'CONVERGE_ERR_RECONCILE_REQUEUE_AFTER',
  /** A wait was aborted through its AbortSignal. */
  ABORTED: 'CONVERGE_ERR_ABORTED',
  /** A reconcile's kind stopped being served (the reason its signal aborted). */
  DYNAMIC_KIND_STOPPED: 'CONVERGE_ERR_DYNAMIC_KIND_STOPPED',
  /** `serve` got a GroupVersionResource its backend does not serve. */
  DYNAMIC_RESOURCE_NOT_SERVED: 'CONVERGE_ERR_DYNAMIC_RESOURCE_NOT_SERVED',
  /** The same informer was added twice for one kind to an InformerController. */
  WATCHER_INFORMER_ALREADY_ADDED: 'CONVERGE_ERR_WATCHER_INFORMER_ALREADY_ADDED',
  /** An event reconciler returned something that is not a ReconcileResult. */
  WATCHER_INVALID_RESULT: 'CONVERGE_ERR_WATCHER_INVALID_RESULT',
  /** A finalizer name (given or supplied) is not one Kubernetes accepts. */
  WATCHER_INVALID_FINALIZER: 'CONVERGE_ERR_WATCHER_INVALID_FINALIZER',
  /** Adding, replacing or removing the opinionated watcher's finalizer failed. */
  WATCHER_FINALIZER_PATCH_FAILED: 'CONVERGE_ERR_WATCHER_FINALIZER_PATCH_FAILED',
  /** A stop hook (the builder's `onStop`) threw or rejected; logged, never thrown. */
  LIFECYCLE_STOP_HOOK_FAILED: 'CONVERGE_ERR_LIFECYCLE_STOP_HOOK_FAILED',
  /** A stop hook ran past its `timeoutMs`; logged, never thrown. */
  LIFECYCLE_STOP_HOOK_TIMEOUT: 'CONVERGE_ERR_LIFECYCLE_STOP_HOOK_TIMEOUT',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

export interface ConvergeErrorOptions {
  readonly cause?: unknown;
}

/** Base class of every error thrown by Converge. */
export class ConvergeError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: ConvergeErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.name = new.target.name;
  }

  get [brand](): true {
    return true;
  }

  /**
   * `instanceof` that survives duplicate installs: a Converge error from another copy of the
   * package matches a class of this copy with the same name anywhere in its class chain.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class `instanceof` was asked about.
    const target = this as unknown as { name: string; prototype: object };
    if (!isConvergeError(value)) return false;
    if (target === ConvergeError) return true;
    for (let p: object | null = Object.getPrototypeOf(value); p !== null; p = Object.getPrototypeOf(p)) {
      if (p === target.prototype) return true;
      const ctor = (p as { constructor?: { name?: string } }).constructor;
      if (ctor?.name === target.name) return true;
    }
    return false;
  }
}

/** True if `value` is a Converge error, from this copy of the package or another. */
export function isConvergeError(value: unknown): value is ConvergeError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { [brand]?: unknown })[brand] === true &&
    typeof (value as { code?: unknown }).code === 'string'
  );
}

/** An options object was invalid. `field` names the offending option. */
export class OptionsError extends ConvergeError {
  readonly field: string;
  readonly value: unknown;

  constructor(field: string, value: unknown, expected: string) {
    super(
      ErrorCodes.OPTIONS_INVALID,
      `invalid option ${field}: expected ${expected}, got ${describe(value)}`,
    );
    this.field = field;
    this.value = value;
  }
}

/** `start()` was called twice, or after the component stopped. Components start once. */
export class AlreadyStartedError extends ConvergeError {
  constructor(component: string) {
    super(ErrorCodes.LIFECYCLE_ALREADY_STARTED, `${component} was already started; components start once`);
  }
}

/** An operation was aborted through its signal. */
export class AbortedError extends ConvergeError {
  constructor(message = 'operation aborted', options?: ConvergeErrorOptions) {
    super(ErrorCodes.ABORTED, message, options);
  }
}

/** Describes an arbitrary value for an error message without throwing. */
export function describe(value: unknown): string {
  if (typeof value === 'number') return Number.isNaN(value) ? 'NaN' : String(value);
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'function') return 'a function';
  try {
    return JSON.stringify(value) ?? typeof value;
  } catch {
    return typeof value;
  }
}
