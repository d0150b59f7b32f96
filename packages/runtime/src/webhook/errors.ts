import { ConvergeError, type ConvergeErrorOptions } from '../errors.ts';

/** Stable codes of webhook registration errors (area MANAGER: registrations live in the manager). */
export const WebhookErrorCodes = {
  /** A webhook builder was misused: `complete()` with nothing added, twice, or a handler added twice. */
  BUILDER_MISUSE: 'CONVERGE_ERR_MANAGER_WEBHOOK_BUILDER_MISUSE',
  /** A kind got a second webhook of the same type, or two webhooks asked for one path or name. */
  CONFLICT: 'CONVERGE_ERR_MANAGER_WEBHOOK_CONFLICT',
  /** The `/convert` dispatcher got an object of a group and kind no converter was registered for. */
  NO_CONVERTER: 'CONVERGE_ERR_MANAGER_WEBHOOK_NO_CONVERTER',
} as const;

/**
 * A {@link WebhookBuilder} was used in a way that registers nothing sensible: `complete()` before
 * any `withDefaulter`/`withValidator`/`withConverter`, `complete()` twice, a `with*` call after
 * `complete()`, or the same `with*` twice on one builder.
 */
export class WebhookBuilderError extends ConvergeError {
  constructor(message: string, options?: ConvergeErrorOptions) {
    super(WebhookErrorCodes.BUILDER_MISUSE, message, options);
  }
}

/**
 * A registration clashes with an earlier one: the same group, version and kind registered twice
 * for validating (or mutating), a second converter for a group and kind, or a path or webhook
 * name another registration already uses. Nothing of the failing `complete()` was registered.
 */
export class WebhookConflictError extends ConvergeError {
  /** The path or name both registrations want. */
  readonly conflict: string;
  constructor(message: string, conflict: string, options?: ConvergeErrorOptions) {
    super(WebhookErrorCodes.CONFLICT, message, options);
    this.conflict = conflict;
  }
}

/**
 * The conversion dispatcher (`/convert`) got an object whose group and kind have no registered
 * converter. The webhook server answers the whole `ConversionReview` with `Failure` and this message.
 */
export class ConverterNotFoundError extends ConvergeError {
  readonly group: string;
  readonly kind: string;
  constructor(group: string, kind: string, registered: readonly string[]) {
    super(
      WebhookErrorCodes.NO_CONVERTER,
      `no converter is registered for kind ${kind} of group ${JSON.stringify(group)}` +
        ` (registered: ${registered.length === 0 ? 'none' : registered.join(', ')})`,
    );
    this.group = group;
    this.kind = kind;
  }
}
