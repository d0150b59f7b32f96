/**
 * Converge runtime: the building blocks of controllers that drive actual state towards desired
 * state, for Kubernetes resources and for resources that live elsewhere.
 *
 * - `clock` — injectable time (`realClock`; `VirtualClock` in `@converge/runtime/testing`)
 * - `workqueue` — deduplicating, exclusive, delayed, rate-limited, prioritised, fair queue
 * - `reconcile` — `Reconciler`, result constructors, `TerminalError`
 * - `source`, `handler`, `predicate`, `event` — events in, requests out
 * - `controller` — sources → queue → workers → reconciler, with graceful shutdown
 * - `dynamic` — runtime kinds: `DynamicController` serves and stops kinds while it runs (kro)
 * - `backend` — the Backend contract and its typed errors
 * - `client` — the cached client with read-your-writes, createOrUpdate, owners, finalizers, conditions,
 *   `ignoreNotFound`
 * - `kinds` — built-in Kubernetes kinds, typed: `Deployment` and `deploymentType`, `ConfigMap` and
 *   `configMapType`, …, and the types they use (`PodSpec`, `Container`, …), generated from the
 *   Kubernetes 1.32 OpenAPI document
 * - `watcher` — event-style controllers (grafana app-sdk): `InformerController`, `OpinionatedWatcher`,
 *   `OpinionatedReconciler`, retry and retry-dequeue policies
 * - `ownership` — owners in another backend: owner labels, `enqueueForLabelOwner`, `OrphanCollector`
 *
 * @module
 */
export * from './backend/index.ts';
export * from './builder/index.ts';
export * from './cache/index.ts';
export * from './client/index.ts';
export * from './clock/index.ts';
export * from './controller/index.ts';
export * from './dynamic/index.ts';
export {
  AbortedError,
  AlreadyStartedError,
  ConvergeError,
  type ConvergeErrorOptions,
  type ErrorCode,
  ErrorCodes,
  isConvergeError,
  OptionsError,
} from './errors.ts';
export * from './event/index.ts';
export * from './events/index.ts';
export * from './handler/index.ts';
export * from './informer/index.ts';
export * from './kinds/index.ts';
export * from './leader-election/index.ts';
export * from './log/index.ts';
export { isLoopbackHost } from './loopback.ts';
export * from './manager/index.ts';
export * from './object/index.ts';
export * from './ownership/index.ts';
export * from './patch/index.ts';
export * from './permissions/index.ts';
export * from './predicate/index.ts';
export * from './reconcile/index.ts';
export * from './runnable/index.ts';
export * from './selector/index.ts';
export * from './sharding/index.ts';
export * from './source/index.ts';
export * from './watcher/index.ts';
export * from './webhook/index.ts';
export * from './workqueue/index.ts';
