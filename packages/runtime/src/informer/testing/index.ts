/**
 * Test doubles for informers and everything built on them: {@link FakeBackend}, a scripted
 * in-memory Backend with pagination, watches with history and bookmarks, and fault injection
 * (failed lists and watches, dropped or broken watches, expiry by compaction, raw malformed or
 * stale events), and {@link settle} to let an informer's pending work run without sleeping.
 *
 * @example
 * const clock = new VirtualClock();
 * const backend = new FakeBackend({ clock });
 * const informer = new Informer({ backend, type: configMaps, clock });
 * backend.failNext('list', new UnavailableError('down')); // the informer backs off and retries
 *
 * @module
 */
export { FakeBackend, type FakeBackendOptions } from './fake-backend.ts';
export { settle } from './settle.ts';
