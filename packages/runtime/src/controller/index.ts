/**
 * The controller: sources feed a work queue, workers run the reconciler, results and errors
 * decide what happens next. See {@link Controller}.
 *
 * @module
 */
export { Controller, type ControllerQueue, type ControllerState } from './controller.ts';
export { ShutdownTimeoutError, SourceFailedError, SourceSyncError } from './errors.ts';
export type { HotLoopInfo, HotLoopOptions } from './hot-loop.ts';
export type { ControllerKeyInfo } from './inspect.ts';
export type { ReconcileInfo, ReconcileInterceptor, ReconcileSummary } from './intercept.ts';
export type {
  ControllerMetrics,
  ControllerOptions,
  ControllerSharding,
  ReconcileErrorDetail,
  ReconcileResultLabel,
} from './options.ts';
