/**
 * Lifecycle: the {@link Runnable} interface every long-running part implements.
 *
 * @module
 */
export type { Runnable } from './runnable.ts';
