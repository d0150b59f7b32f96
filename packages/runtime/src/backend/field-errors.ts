import type { StatusCause } from './errors.ts';

/**
 * Renders a value as Kubernetes prints it in field errors (Go's `%q`/`%v`): strings quoted, an
 * absent value (a nil pointer in Go) as `0x0`, JSON null as `null`, anything else as JSON.
 */
function render(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === undefined) return '0x0';
  if (value === null) return 'null';
  return JSON.stringify(value) ?? String(value);
}

/**
 * Field error constructors for the `causes` of an {@link InvalidError}, worded as apimachinery's
 * `field.Required`, `field.Invalid`, … so messages match what kube-apiserver prints.
 *
 * @example
 * throw new InvalidError('Widget "w" is invalid: spec.size: Required value', {
 *   details: { causes: [fieldError.required('spec.size')] },
 * });
 */
export const fieldError = {
  required(field: string, detail = ''): StatusCause {
    return {
      reason: 'FieldValueRequired',
      message: detail ? `Required value: ${detail}` : 'Required value',
      field,
    };
  },
  invalid(field: string, value: unknown, detail: string): StatusCause {
    return { reason: 'FieldValueInvalid', message: `Invalid value: ${render(value)}: ${detail}`, field };
  },
  forbidden(field: string, detail: string): StatusCause {
    return { reason: 'FieldValueForbidden', message: `Forbidden: ${detail}`, field };
  },
  tooLong(field: string, max: number): StatusCause {
    return { reason: 'FieldValueTooLong', message: `Too long: must have at most ${max} bytes`, field };
  },
  unsupported(field: string, value: unknown, supported: readonly string[]): StatusCause {
    const list = supported.map((s) => JSON.stringify(s)).join(', ');
    return {
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${render(value)}: supported values: ${list}`,
      field,
    };
  },
  duplicate(field: string, value: unknown): StatusCause {
    return { reason: 'FieldValueDuplicate', message: `Duplicate value: ${render(value)}`, field };
  },
};
