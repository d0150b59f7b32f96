/**
 * The builder: an easy way to wire a controller from informers, handlers and predicates, using
 * only public parts. See {@link ControllerBuilder}.
 *
 * @module
 */
export {
  type BuilderHost,
  type BuilderWatchOptions,
  ControllerBuilder,
  controllerFor,
  type OwnsOptions,
} from './builder.ts';
