/**
 * Test doubles that are part of the public API: the virtual clock (and a pausable one over it, for
 * a process paused or with its clock stepped), a fake backend and an in-memory logger. They
 * need nothing but the runtime. The Backend conformance suite (which needs vitest and fast-check)
 * is the separate entry `@converge/runtime/testing/backend-suite`.
 *
 * @module
 */
export { PausableClock } from '../clock/pausable-clock.ts';
export { flushMicrotasks, VirtualClock, type VirtualClockOptions } from '../clock/virtual-clock.ts';
export { FakeBackend, type FakeBackendOptions, settle } from '../informer/testing/index.ts';
export { type LogRecord, MemoryLogger } from '../log/index.ts';
