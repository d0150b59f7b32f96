import { AlreadyStartedError, ConvergeError, type ConvergeErrorOptions, ErrorCodes } from '../errors.ts';

/**
 * A source's list function threw, rejected or returned something that is not an array (or `keyOf` /
 * `versionOf` failed on an item). What the list threw is the `cause`.
 *
 * @example
 * if (error instanceof ListFailedError) console.warn(error.source, error.cause);
 */
export class ListFailedError extends ConvergeError {
  /** The source's name. */
  readonly source: string;

  constructor(source: string, reason: string, options?: ConvergeErrorOptions) {
    super(ErrorCodes.SOURCE_LIST_FAILED, `${source}: list failed: ${reason}`, options);
    this.source = source;
  }
}

/**
 * A source's list call did not settle within `timeoutMs`; its signal was aborted with this error.
 *
 * @example
 * const list = async (signal: AbortSignal) => {
 *   const response = await fetch(url, { signal }); // rejects with signal.reason, a ListTimeoutError
 *   return response.json();
 * };
 */
export class ListTimeoutError extends ConvergeError {
  readonly source: string;
  readonly timeoutMs: number;

  constructor(source: string, timeoutMs: number) {
    super(ErrorCodes.SOURCE_LIST_TIMEOUT, `${source}: list did not finish within ${timeoutMs}ms`);
    this.source = source;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * A list returned two items with the same key; the whole result is rejected (handled like a failed
 * list: nothing is emitted and the previous state is kept).
 *
 * @example
 * if (error instanceof DuplicateKeyError) console.warn(`fix keyOf: ${error.key} is not unique`);
 */
export class DuplicateKeyError extends ConvergeError {
  readonly source: string;
  readonly key: string;

  constructor(source: string, key: string) {
    super(ErrorCodes.SOURCE_DUPLICATE_KEY, `${source}: list returned the key ${JSON.stringify(key)} twice`);
    this.source = source;
    this.key = key;
  }
}

/** `start()` called a second time. Sources start once. */
export function alreadyStarted(component: string): ConvergeError {
  return new AlreadyStartedError(component);
}
