import { ConvergeError, type ConvergeErrorOptions, ErrorCodes } from '../errors.ts';

/** The reason an in-flight reconcile's signal aborts when its kind stops being served. */
export class KindStoppedError extends ConvergeError {
  /** `group/version/resource` of the kind. */
  readonly kind: string;

  constructor(kind: string, options?: ConvergeErrorOptions) {
    super(ErrorCodes.DYNAMIC_KIND_STOPPED, `kind ${kind} is no longer served`, options);
    this.kind = kind;
  }
}

/**
 * `serve` was given a GroupVersionResource its backend does not serve (its discovery does not list
 * it, refreshed once), or a backend that cannot resolve one.
 */
export class ResourceNotServedError extends ConvergeError {
  /** `group/version/resource`. */
  readonly resource: string;

  constructor(resource: string, backend: string, why: string) {
    super(
      ErrorCodes.DYNAMIC_RESOURCE_NOT_SERVED,
      `cannot serve ${resource}: ${why} (backend ${backend}); install its CustomResourceDefinition, check the group, version and plural, or pass a ResourceType`,
    );
    this.resource = resource;
  }
}

/** `serve` was called after the dynamic controller stopped. */
export class ControllerShutDownError extends ConvergeError {
  constructor(component: string) {
    super(ErrorCodes.LIFECYCLE_SHUT_DOWN, `${component} has stopped; it serves no more kinds`);
  }
}
