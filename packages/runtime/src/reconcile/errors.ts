import { ConvergeError, type ConvergeErrorOptions, ErrorCodes } from '../errors.ts';
import { durationMs } from '../options.ts';

/**
 * An error that must not be retried (controller-runtime's `TerminalError`, kro's `NoRequeue`).
 * The request is forgotten and runs again only on its next event. It is still logged and counted.
 * Recognised anywhere in an error's `cause` chain.
 *
 * @example
 * if (!isValid(spec)) throw new TerminalError('spec.replicas must be positive');
 */
export class TerminalError extends ConvergeError {
  constructor(message: string, options?: ConvergeErrorOptions) {
    super(ErrorCodes.RECONCILE_TERMINAL, message, options);
  }
}

/**
 * Thrown by a reconciler to ask for its request to run again after `afterMs` (openclarity's
 * `RequeueAfterError`, kro's `RequeueNeededAfter`). Recognised anywhere in the `cause` chain.
 * Equivalent to returning `requeueAfter(afterMs)`.
 */
export class RequeueAfterError extends ConvergeError {
  readonly afterMs: number;

  constructor(afterMs: number, message = '', options?: ConvergeErrorOptions) {
    const ms = durationMs('afterMs', afterMs, 0);
    super(
      ErrorCodes.RECONCILE_REQUEUE_AFTER,
      message === '' ? `requeuing after ${ms}ms` : `${message} so requeuing after ${ms}ms`,
      options,
    );
    this.afterMs = ms;
  }
}

/** A reconcile ran past its timeout; its signal was aborted with this reason. Retryable. */
export class ReconcileTimeoutError extends ConvergeError {
  readonly timeoutMs: number;

  constructor(timeoutMs: number) {
    super(ErrorCodes.RECONCILE_TIMEOUT, `reconcile timed out after ${timeoutMs}ms`);
    this.timeoutMs = timeoutMs;
  }
}

/** A reconcile kept running after its signal aborted and the grace period passed. Retryable. */
export class ReconcileAbandonedError extends ConvergeError {
  constructor(graceMs: number, options?: ConvergeErrorOptions) {
    super(
      ErrorCodes.RECONCILE_ABANDONED,
      `reconcile abandoned: still running ${graceMs}ms after its signal aborted`,
      options,
    );
  }
}

/** A reconciler threw a value that is not an Error; the value is the `cause`. Retryable. */
export class NonErrorThrownError extends ConvergeError {
  constructor(value: unknown) {
    super(ErrorCodes.RECONCILE_NON_ERROR_THROWN, `reconciler threw a non-Error value: ${preview(value)}`, {
      cause: value,
    });
  }
}

/** A reconciler returned something that is not a Result. Retryable. */
export class InvalidResultError extends ConvergeError {
  constructor(value: unknown) {
    super(
      ErrorCodes.RECONCILE_INVALID_RESULT,
      `reconciler returned ${preview(value)}; return done(), requeue(), requeueAfter(ms), requeueNow() or nothing`,
    );
  }
}

/**
 * Finds the first error in `error`'s cause chain (including AggregateError members) for which
 * `match` is true, like Go's `errors.As`. Cycles are tolerated.
 */
export function findInCauseChain<E>(error: unknown, match: (e: unknown) => e is E): E | undefined {
  const seen = new Set<unknown>();
  const stack: unknown[] = [error];
  while (stack.length > 0) {
    const current = stack.pop();
    if (current === undefined || current === null || seen.has(current)) continue;
    seen.add(current);
    if (match(current)) return current;
    if (typeof current === 'object') {
      if (current instanceof AggregateError) stack.push(...current.errors);
      stack.push((current as { cause?: unknown }).cause);
    }
  }
  return undefined;
}

/** True if a {@link TerminalError} is anywhere in the cause chain. */
export function isTerminalError(error: unknown): boolean {
  return findInCauseChain(error, (e): e is TerminalError => e instanceof TerminalError) !== undefined;
}

function preview(value: unknown): string {
  try {
    const text = typeof value === 'string' ? JSON.stringify(value) : String(JSON.stringify(value) ?? value);
    return text.length > 100 ? `${text.slice(0, 100)}…` : text;
  } catch {
    return typeof value;
  }
}
