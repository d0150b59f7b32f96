/**
 * The builder: an easy way to wire a controller from informers, handlers and predicates, using
 * only public parts. See {@link ControllerBuilder}. {@link withStopHook} runs cleanup once a
 * runnable stopped (the builder's `onStop`).
 *
 * @module
 */
export {
  type BuilderHost,
  type BuilderWatchOptions,
  ControllerBuilder,
  controllerFor,
  type OnStopOptions,
  type OwnsOptions,
  type ReadsOptions,
} from './builder.ts';
export {
  type StopHook,
  type StopHookContext,
  StopHookFailedError,
  type StopHookOptions,
  StopHookTimeoutError,
  withStopHook,
} from './stop-hook.ts';
