import { type Clock, realClock, type Timer } from '../clock/index.ts';
import {
  AlreadyStartedError,
  ConvergeError,
  type ConvergeErrorOptions,
  ErrorCodes,
  OptionsError,
} from '../errors.ts';
import { type Logger, noopLogger } from '../log/index.ts';
import { nonEmptyString, positiveDurationMs } from '../options.ts';
import { toError } from '../reconcile/index.ts';
import type { Runnable } from '../runnable/index.ts';

/** What a stop hook is told. */
export interface StopHookContext {
  /** Aborts when the hook's `timeoutMs` has passed: stop waiting for slow cleanup then. */
  readonly signal: AbortSignal;
  /** The error the runnable stopped with (its `start` rejected), if any. */
  readonly error?: Error;
}

/** Cleanup to run once a runnable stopped (Kumori's `Clean()`). */
export type StopHook = (context: StopHookContext) => void | Promise<void>;

/** Options of {@link withStopHook}. */
export interface StopHookOptions {
  /** How long the hook may run before its signal aborts and it is no longer waited for. Default 10 000. */
  readonly timeoutMs?: number;
  /** Called with the hook's failure or timeout after it is logged. Must not throw. */
  readonly onError?: (error: StopHookFailedError | StopHookTimeoutError) => void;
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Name for logs and errors. Default 'runnable'. */
  readonly name?: string;
}

/** A stop hook threw or rejected (`cause` has what it threw). Logged and reported, never thrown. */
export class StopHookFailedError extends ConvergeError {
  readonly runnable: string;
  constructor(runnable: string, options?: ConvergeErrorOptions) {
    super(ErrorCodes.LIFECYCLE_STOP_HOOK_FAILED, `stop hook of ${runnable} failed`, options);
    this.runnable = runnable;
  }
}

/** A stop hook ran past its timeout; its signal aborted with this error. Logged and reported, never thrown. */
export class StopHookTimeoutError extends ConvergeError {
  readonly runnable: string;
  readonly timeoutMs: number;
  constructor(runnable: string, timeoutMs: number) {
    super(
      ErrorCodes.LIFECYCLE_STOP_HOOK_TIMEOUT,
      `stop hook of ${runnable} did not finish within ${timeoutMs}ms`,
    );
    this.runnable = runnable;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * Wraps `runnable` so that `hook` runs once after its `start` settled — for a controller, after
 * its workers finished (or its shutdown timed out). The hook gets a signal that aborts after
 * `timeoutMs`; then it is no longer waited for. A hook that throws, rejects or times out is logged
 * (`Stop hook failed` / `Stop hook timed out`, with a {@link StopHookFailedError} or
 * {@link StopHookTimeoutError}) and passed to `onError`, never thrown: the wrapper settles as the
 * runnable did, resolving or rejecting with its error. A runnable that never started (a
 * leader-gated one on a standby) never runs its hook.
 *
 * The builder's `onStop` uses it; wrap any runnable by hand the same way.
 *
 * @example
 * manager.add(withStopHook(controller, async ({ signal }) => releaseLocks(signal), { timeoutMs: 5000 }));
 */
export function withStopHook(runnable: Runnable, hook: StopHook, options: StopHookOptions = {}): Runnable {
  if (typeof runnable !== 'object' || runnable === null || typeof runnable.start !== 'function') {
    throw new OptionsError('runnable', runnable, 'a Runnable');
  }
  if (typeof hook !== 'function') throw new OptionsError('hook', hook, 'a function');
  if (typeof options !== 'object' || options === null)
    throw new OptionsError('options', options, 'an object');
  const timeoutMs = positiveDurationMs('timeoutMs', options.timeoutMs, 10_000);
  const name = nonEmptyString('name', options.name, 'runnable');
  const clock = options.clock ?? realClock;
  const logger = (options.logger ?? noopLogger).child({ runnable: name });
  const { onError } = options;
  if (onError !== undefined && typeof onError !== 'function')
    throw new OptionsError('onError', onError, 'a function');
  let started = false;

  const report = (error: StopHookFailedError | StopHookTimeoutError): void => {
    logger.error(
      { err: error },
      error instanceof StopHookTimeoutError ? 'Stop hook timed out' : 'Stop hook failed',
    );
    try {
      onError?.(error);
    } catch {
      // Observers must never break shutdown.
    }
  };

  const runHook = async (error: Error | undefined): Promise<void> => {
    const abort = new AbortController();
    let timer: Timer | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = clock.setTimer(() => {
        abort.abort(new StopHookTimeoutError(name, timeoutMs));
        resolve('timeout');
      }, timeoutMs);
    });
    const context: StopHookContext = { signal: abort.signal, ...(error === undefined ? {} : { error }) };
    const ran = (async () => {
      try {
        await hook(context);
        return 'done' as const;
      } catch (cause) {
        return new StopHookFailedError(name, { cause });
      }
    })();
    const outcome = await Promise.race([ran, timedOut]);
    timer?.cancel();
    if (outcome === 'timeout') report(abort.signal.reason as StopHookTimeoutError);
    else if (outcome !== 'done') report(outcome);
  };

  return {
    ...(runnable.needLeaderElection === undefined ? {} : { needLeaderElection: runnable.needLeaderElection }),
    async start(signal: AbortSignal): Promise<void> {
      if (started) throw new AlreadyStartedError(name);
      started = true;
      try {
        await runnable.start(signal);
      } catch (error) {
        await runHook(toError(error));
        throw error;
      }
      await runHook(undefined);
    },
  };
}
