import type { StatusCause } from '@converge/runtime';
import { invalidFieldManager } from './errors.ts';

/** Longest fieldManager the apiserver accepts. */
export const FIELD_MANAGER_MAX_LENGTH = 128;

/** Letters, marks, numbers, punctuation, symbols and the ASCII space: Go's `unicode.IsPrint`. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/**
 * Validates the `fieldManager` query parameter of a write: required for apply, at most 128
 * characters, printable. Throws an InvalidError shaped like the apiserver's
 * (`PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`).
 *
 * @example
 * validateFieldManager('PatchOptions', url.searchParams.get('fieldManager') ?? '', { apply: true });
 */
export function validateFieldManager(
  optionsKind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions',
  fieldManager: string,
  options: { readonly apply?: boolean } = {},
): void {
  const causes: StatusCause[] = [];
  if (options.apply === true && fieldManager === '') {
    causes.push({
      reason: 'FieldValueRequired',
      field: 'fieldManager',
      message: 'Required value: is required for apply patch',
    });
  }
  const characters = [...fieldManager];
  if (characters.length > FIELD_MANAGER_MAX_LENGTH) {
    causes.push({
      reason: 'FieldValueTooLong',
      field: 'fieldManager',
      message: `Too long: may not be more than ${FIELD_MANAGER_MAX_LENGTH} bytes`,
    });
  }
  characters.forEach((c, i) => {
    if (PRINTABLE.test(c)) return;
    const code = `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
    causes.push({
      reason: 'FieldValueInvalid',
      field: 'fieldManager',
      message: `Invalid value: ${JSON.stringify(fieldManager)}: invalid character ${code} (at position ${i})`,
    });
  });
  if (causes.length > 0) throw invalidFieldManager(optionsKind, causes);
}
