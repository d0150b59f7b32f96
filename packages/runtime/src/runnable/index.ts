/**
 * The {@link Runnable} interface every long-running part implements: nothing runs until
 * `start(signal)`, everything stops when the signal aborts.
 *
 * @module
 */
export type { Runnable } from './runnable.ts';
