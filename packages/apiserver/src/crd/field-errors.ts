/**
 * apimachinery's `field.Error` rendered as `metav1.StatusCause`: `reason` is the error type
 * (`FieldValueInvalid`), `message` its body (`Invalid value: 3: must be …`), `field` the path.
 */
import { InvalidError, type StatusCause } from '@converge/runtime';
import { goNumber, goQuote, goSyntax } from './go-format.ts';

/** Marks a field error that prints no value (`Too many: must have at most 3 items`). */
export const OMIT: unique symbol = Symbol('omit');

const TYPE_TEXT: Record<string, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  InternalError: 'Internal error',
  FieldValueTypeInvalid: 'Invalid value',
};

const VALUELESS = new Set([
  'FieldValueRequired',
  'FieldValueForbidden',
  'FieldValueTooLong',
  'InternalError',
]);

/** A bad value printed verbatim (a Go-syntax rendering built by the caller, e.g. `[]string{"a"}`). */
export class GoLiteral {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** `[]string{"a", "b"}`, as `%#v` prints a Go string slice. */
export function goStrings(values: readonly string[]): GoLiteral {
  return new GoLiteral(`[]string{${values.map((v) => goQuote(v)).join(', ')}}`);
}

/** How a bad value prints after `Invalid value: ` (Go's `%q`, `%v` or `%#v`). */
export function badValueText(value: unknown): string {
  if (value instanceof GoLiteral) return value.text;
  if (value === null || value === undefined) return '"null"';
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'number') return goNumber(value);
  if (typeof value === 'boolean') return String(value);
  return goSyntax(value);
}

function cause(reason: string, field: string, value: unknown, detail: string): StatusCause {
  let message = TYPE_TEXT[reason] ?? reason;
  if (!VALUELESS.has(reason) && value !== OMIT) message += `: ${badValueText(value)}`;
  if (detail !== '') message += `: ${detail}`;
  return { reason, message, field };
}

/** `field.Required`. */
export function required(field: string, detail = ''): StatusCause {
  return cause('FieldValueRequired', field, OMIT, detail);
}

/** `field.Invalid`. */
export function invalid(field: string, value: unknown, detail: string): StatusCause {
  return cause('FieldValueInvalid', field, value, detail);
}

/** `field.TypeInvalid`. */
export function typeInvalid(field: string, value: unknown, detail: string): StatusCause {
  return cause('FieldValueTypeInvalid', field, value, detail);
}

/** `field.Forbidden`. */
export function forbidden(field: string, detail: string): StatusCause {
  return cause('FieldValueForbidden', field, OMIT, detail);
}

/** `field.Duplicate`. */
export function duplicate(field: string, value: unknown): StatusCause {
  return cause('FieldValueDuplicate', field, value, '');
}

/** `field.NotSupported` with the supported values listed. */
export function notSupported(field: string, value: unknown, supported: readonly string[]): StatusCause {
  const detail =
    supported.length > 0 ? `supported values: ${supported.map((v) => goQuote(v)).join(', ')}` : '';
  return cause('FieldValueNotSupported', field, value, detail);
}

/** `field.TooLong` (the value is never printed). */
export function tooLong(field: string, maxLength: number): StatusCause {
  const detail = maxLength >= 0 ? `may not be more than ${maxLength} bytes` : 'value is too long';
  return cause('FieldValueTooLong', field, OMIT, detail);
}

/** `field.TooMany`. */
export function tooMany(field: string, actual: number, max: number): StatusCause {
  const detail = max >= 0 ? `must have at most ${max} items` : 'has too many items';
  return cause('FieldValueTooMany', field, actual >= 0 ? actual : OMIT, detail);
}

/** `field.InternalError`. */
export function internal(field: string, detail: string): StatusCause {
  return cause('InternalError', field, OMIT, detail);
}

/** `field: message`, as `field.Error.Error()` prints a cause. */
export function causeText(c: StatusCause): string {
  return `${c.field}: ${c.message}`;
}

/** Path helpers in `field.Path` notation: `spec.versions[0].schema`, `properties[spec]`. */
export const path = {
  child(parent: string, ...names: string[]): string {
    let out = parent;
    for (const name of names) out = out === '' ? name : `${out}.${name}`;
    return out;
  },
  key(parent: string, key: string): string {
    return `${parent}[${key}]`;
  },
  index(parent: string, index: number): string {
    return `${parent}[${index}]`;
  },
};

/** Formats a number the way a Go `%v` of an int64 or float64 field does. */
export function num(value: number): string {
  return goNumber(value);
}

/**
 * The 422 kube-apiserver answers for these causes: `Widget.example.com "w1" is invalid: spec.size:
 * Invalid value: …` (several causes are joined as `[a, b]`; repeated messages are printed once).
 *
 * @example
 * const causes = validateCustomResource(schema, body);
 * if (causes.length > 0) throw invalidError({ group: 'example.com', kind: 'Widget' }, 'w1', causes);
 */
export function invalidError(
  groupKind: { readonly group: string; readonly kind: string },
  name: string,
  causes: readonly StatusCause[],
): InvalidError {
  const seen = new Set<string>();
  const parts: string[] = [];
  for (const c of causes) {
    const text = causeText(c);
    if (seen.has(text)) continue;
    seen.add(text);
    parts.push(text);
  }
  const summary = parts.length === 1 ? (parts[0] ?? '') : `[${parts.join(', ')}]`;
  const qualified = groupKind.group === '' ? groupKind.kind : `${groupKind.kind}.${groupKind.group}`;
  return new InvalidError(`${qualified} ${goQuote(name)} is invalid: ${summary}`, {
    details: { name, group: groupKind.group, kind: groupKind.kind, causes },
  });
}
