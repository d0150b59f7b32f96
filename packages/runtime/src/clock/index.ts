/**
 * Time for Converge: a {@link Clock} interface with the real implementation {@link realClock}.
 * Every timer in the runtime goes through a Clock so tests can swap in a `VirtualClock`
 * (from `@converge/runtime/testing`).
 *
 * @module
 */
export { type Clock, jitter, realClock, settlesWithin, sleepOn, type Timer } from './clock.ts';
