import {
  BadRequestError,
  ConflictError,
  ConvergeError,
  InvalidError,
  type StatusCause,
} from '@converge/runtime';

/**
 * Stable codes of the patch module's errors (never reused). Every error the module throws is one of
 * the runtime's typed backend errors — so the HTTP core turns it into a `metav1.Status` by its
 * `status`, `reason`, message and `details` — whose `cause` is a {@link PatchError} carrying one of
 * these codes.
 *
 * @example
 * if (error instanceof BackendError && (error.cause as { code?: string })?.code === PatchErrorCodes.APPLY_CONFLICT) retryWithForce();
 */
export const PatchErrorCodes = {
  /** The patch body or one of its directives is malformed (400). */
  MALFORMED: 'CONVERGE_ERR_APISERVER_PATCH_MALFORMED',
  /** A directive is well formed but cannot be carried out: unknown `$patch`, lists of lists (422). */
  INVALID_DIRECTIVE: 'CONVERGE_ERR_APISERVER_PATCH_INVALID_DIRECTIVE',
  /** A server-side apply changes fields another manager owns, without `force` (409). */
  APPLY_CONFLICT: 'CONVERGE_ERR_APISERVER_PATCH_APPLY_CONFLICT',
  /** An apply configuration breaks the list semantics of its type: duplicate or missing keys (422). */
  INVALID_APPLY: 'CONVERGE_ERR_APISERVER_PATCH_INVALID_APPLY',
  /** An apply request is malformed: managedFields in the body, a wrong apiVersion (400). */
  MALFORMED_APPLY: 'CONVERGE_ERR_APISERVER_PATCH_MALFORMED_APPLY',
  /** The fieldManager is missing (apply), too long or not printable (422). */
  INVALID_FIELD_MANAGER: 'CONVERGE_ERR_APISERVER_PATCH_INVALID_FIELD_MANAGER',
} as const;

/** One of {@link PatchErrorCodes}. */
export type PatchErrorCode = (typeof PatchErrorCodes)[keyof typeof PatchErrorCodes];

/**
 * The `cause` of every error the patch module throws: names the precise problem with a stable code.
 *
 * @example
 * catch (e) { if (e instanceof BadRequestError && e.cause instanceof PatchError) log.info('bad patch', { code: e.cause.code }); }
 */
export class PatchError extends ConvergeError {
  constructor(code: PatchErrorCode, message: string) {
    super(code, message);
  }
}

/** A 400 for a malformed strategic merge patch. */
export function malformedPatch(message: string): BadRequestError {
  return new BadRequestError(message, { cause: new PatchError(PatchErrorCodes.MALFORMED, message) });
}

/** A 422 for a directive that cannot be carried out, with one cause at `field`. */
export function invalidDirective(field: string, message: string): InvalidError {
  return new InvalidError(message, {
    cause: new PatchError(PatchErrorCodes.INVALID_DIRECTIVE, message),
    details: { causes: [{ reason: 'FieldValueInvalid', field: field || '<root>', message }] },
  });
}

/** A 400 for a malformed apply request. */
export function malformedApply(message: string): BadRequestError {
  return new BadRequestError(message, { cause: new PatchError(PatchErrorCodes.MALFORMED_APPLY, message) });
}

/** A 422 for an apply configuration that breaks its type's list semantics. */
export function invalidApply(field: string, detail: string): InvalidError {
  const message = `failed to create typed patch object: ${field}: ${detail}`;
  return new InvalidError(message, {
    cause: new PatchError(PatchErrorCodes.INVALID_APPLY, message),
    details: { causes: [{ reason: 'FieldValueInvalid', field, message: detail }] },
  });
}

/** A 422 about the fieldManager option, as `PatchOptions.meta.k8s.io "" is invalid: …`. */
export function invalidFieldManager(optionsKind: string, causes: readonly StatusCause[]): InvalidError {
  const parts = causes.map((c) => `${c.field}: ${c.message}`);
  const summary = parts.length === 1 ? (parts[0] ?? '') : `[${parts.join(', ')}]`;
  const message = `${optionsKind}.meta.k8s.io "" is invalid: ${summary}`;
  return new InvalidError(message, {
    cause: new PatchError(PatchErrorCodes.INVALID_FIELD_MANAGER, message),
    details: { name: '', group: 'meta.k8s.io', kind: optionsKind, causes },
  });
}

/** A 409 for apply conflicts; `causes` carry `FieldManagerConflict` per field. */
export function applyConflict(message: string, causes: readonly StatusCause[]): ConflictError {
  return new ConflictError(message, {
    cause: new PatchError(PatchErrorCodes.APPLY_CONFLICT, message),
    details: { causes },
  });
}
