/**
 * Runtime kinds (kro's dynamic controller): one controller that serves kinds while it runs, with
 * one fair queue and one worker pool for all of them. See {@link DynamicController}; and
 * {@link CrdFollower}, which serves the kinds of CustomResourceDefinitions as they come and go.
 *
 * @module
 */

export {
  CrdErrorCodes,
  compareKubeVersions,
  isEstablished,
  MalformedCrdError,
  resourceTypeOfCrd,
} from './crd.ts';
export { CrdFollower, type CrdFollowerOptions } from './crd-follower.ts';
export {
  DynamicController,
  type DynamicControllerMetrics,
  type DynamicControllerOptions,
  type DynamicControllerState,
} from './dynamic-controller.ts';
export { ControllerShutDownError, KindStoppedError, ResourceNotServedError } from './errors.ts';
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
