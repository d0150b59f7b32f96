/**
 * Test doubles that are part of the public API: the virtual clock and an in-memory logger.
 * Conformance suites and fakes of later packages are exported from here too.
 *
 * @module
 */
export { flushMicrotasks, VirtualClock, type VirtualClockOptions } from '../clock/virtual-clock.ts';
export { type LogRecord, MemoryLogger } from '../log/index.ts';
