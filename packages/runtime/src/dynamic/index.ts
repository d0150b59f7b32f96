/**
 * Runtime kinds (kro's dynamic controller): one controller that serves kinds while it runs, with
 * one fair queue and one worker pool for all of them. See {@link DynamicController}.
 *
 * @module
 */
export {
  DynamicController,
  type DynamicControllerMetrics,
  type DynamicControllerOptions,
  type DynamicControllerState,
} from './dynamic-controller.ts';
export { ControllerShutDownError, KindStoppedError } from './errors.ts';
export {
  type GroupVersionResource,
  gvrOf,
  type KindContext,
  type KindHandler,
  type KindReconciler,
  type KindRequest,
  kindId,
  type ServeOptions,
  type ServesKinds,
} from './types.ts';
