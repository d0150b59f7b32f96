import { InvalidError } from '@converge/runtime';
import { describe, expect, it } from 'vitest';
import { PatchErrorCodes } from './errors.ts';
import { validateFieldManager } from './field-manager.ts';

function errorOf(run: () => void): InvalidError {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidError) return error;
    throw error;
  }
  throw new Error('expected an InvalidError');
}

describe('validateFieldManager', () => {
  it('requires a manager for apply, with the apiserver message and cause', () => {
    const error = errorOf(() => validateFieldManager('PatchOptions', '', { apply: true }));
    expect(error.message).toBe(
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    );
    expect(error.causes).toEqual([
      {
        reason: 'FieldValueRequired',
        field: 'fieldManager',
        message: 'Required value: is required for apply patch',
      },
    ]);
    expect((error.cause as { code?: string }).code).toBe(PatchErrorCodes.INVALID_FIELD_MANAGER);
  });

  it('accepts an empty manager for other writes and any printable manager', () => {
    expect(() => validateFieldManager('UpdateOptions', '')).not.toThrow();
    expect(() =>
      validateFieldManager('PatchOptions', 'kubectl-client-side-apply', { apply: true }),
    ).not.toThrow();
    expect(() => validateFieldManager('CreateOptions', 'Mönch operator/v1 (ünicode) ✓')).not.toThrow();
  });

  it('refuses a manager longer than 128 characters', () => {
    const error = errorOf(() => validateFieldManager('CreateOptions', 'm'.repeat(129)));
    expect(error.message).toBe(
      'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes',
    );
  });

  it('refuses control characters, naming each', () => {
    const error = errorOf(() => validateFieldManager('UpdateOptions', 'a\tb\n'));
    expect(error.causes.map((c) => c.message)).toEqual([
      'Invalid value: "a\\tb\\n": invalid character U+0009 (at position 1)',
      'Invalid value: "a\\tb\\n": invalid character U+000A (at position 3)',
    ]);
  });
});
