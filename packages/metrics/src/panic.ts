import { InvalidResultError, NonErrorThrownError } from '@converge/runtime';

/**
 * Whether a reconcile error counts as a panic (`controller_runtime_reconcile_panics_total`): what
 * a bug throws rather than what a reconciler reports. JavaScript has no panics, so these count:
 * a thrown value that is not an Error, a returned value that is not a result, and the language's
 * own errors of a bug (`ReferenceError`, `RangeError`, `SyntaxError`, `EvalError`, `URIError`,
 * and a `TypeError` without a `cause`: `fetch` throws `TypeError('fetch failed')` with one for
 * network failures, which are not bugs). Anywhere in the error's `cause` chain but the first link
 * decides: a wrapped bug is still a bug.
 */
export function isPanic(error: Error): boolean {
  let e: unknown = error;
  for (let depth = 0; depth < 8 && e instanceof Error; depth++) {
    if (e instanceof NonErrorThrownError || e instanceof InvalidResultError) return true;
    const name = Object.getPrototypeOf(e)?.constructor;
    if (
      name === ReferenceError ||
      name === RangeError ||
      name === SyntaxError ||
      name === EvalError ||
      name === URIError ||
      (name === TypeError && e.cause === undefined)
    ) {
      return true;
    }
    e = e.cause;
  }
  return false;
}
