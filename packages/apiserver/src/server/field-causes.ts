import { fieldError, InvalidError, type StatusCause } from '@converge/runtime';

/** Field error constructors (apimachinery's `field.Required`, `field.Invalid`, …): the runtime's. */
export const cause = fieldError;

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
