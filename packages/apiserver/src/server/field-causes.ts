import { InvalidError, type StatusCause } from '@converge/runtime';

/** Renders a value as Go's `%v`/`%q` do in Kubernetes field errors. */
function render(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === undefined || value === null) return 'null';
  return JSON.stringify(value) ?? String(value);
}

/** Field error constructors (apimachinery's `field.Required`, `field.Invalid`, …). */
export const cause = {
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

/**
 * The 422 Kubernetes answers for field errors: `<Kind>[.<group>] "<name>" is invalid: <field>:
 * <message>` (several causes: `[a, b]`), `details.kind` the Kind, one cause per field.
 */
export function invalidObject(
  kind: string,
  group: string,
  name: string,
  causes: readonly StatusCause[],
): InvalidError {
  const parts = causes.map((c) => (c.field === '' ? c.message : `${c.field}: ${c.message}`));
  const summary = parts.length === 1 ? (parts[0] as string) : `[${parts.join(', ')}]`;
  const qualified = group === '' ? kind : `${kind}.${group}`;
  return new InvalidError(`${qualified} "${name}" is invalid: ${summary}`, {
    details: { name, group, kind, causes },
  });
}

/** The 422 for invalid request options (`CreateOptions.meta.k8s.io "" is invalid: …`). */
export function invalidOptions(kind: string, causes: readonly StatusCause[]): InvalidError {
  return invalidObject(kind, 'meta.k8s.io', '', causes);
}
