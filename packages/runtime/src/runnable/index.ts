/**
 * The {@link Runnable} interface every long-running part implements: nothing runs until
 * `start(signal)`, everything stops when the signal aborts; and {@link LeaderElection}, what gates
 * the runnables that need leadership.
 *
 * @module
 */
export { type LeaderElection, type Runnable, whenAborted } from './runnable.ts';
export { linkSignals, type ScopedSignal, scopedSignal, untilAborted } from './signals.ts';
