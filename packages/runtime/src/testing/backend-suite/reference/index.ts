/**
 * Internals of the reference backend: an etcd-like versioned store, the write pipeline, selectors,
 * patches, watches and the garbage collector. Use `createReferenceBackend` from the suite instead.
 *
 * @module
 */
export { Engine, type Served } from './engine.ts';
export { GarbageCollector } from './gc.ts';
export { clone } from './json.ts';
export { listObjects } from './list.ts';
export { asError, startWatch, type WatchHost, WatchStream } from './watch.ts';
export { create, patch, remove, update, updateStatus } from './writes.ts';
