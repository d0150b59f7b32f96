import type { ConflictError, StatusCause } from '@converge/runtime';
import { applyConflict } from './errors.ts';
import type { FieldSet } from './field-set.ts';
import type { Managed } from './managed-fields.ts';
import { pathString } from './path-element.ts';

/** The fields one manager owns that an apply would change. */
export interface ManagerConflict {
  readonly manager: Managed;
  readonly fields: FieldSet;
}

/** How the apiserver names a manager in conflict messages: `"kubectl" using v1` for an updater. */
export function describeManager(m: Managed): string {
  let text = JSON.stringify(m.manager);
  if (m.subresource !== undefined) text += ` with subresource ${JSON.stringify(m.subresource)}`;
  return m.operation === 'Update' ? `${text} using ${m.apiVersion}` : text;
}

function order(a: Managed, b: Managed): number {
  const key = (m: Managed) => [m.manager, m.operation, m.apiVersion, m.subresource ?? ''].join('\u0000');
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
}

/**
 * The 409 of an apply that conflicts: `Apply failed with 1 conflict: conflict with "mgr" using v1:
 * .data.a`, or for several, one `conflicts with "mgr":` block per manager listing `- <field>` lines.
 * Every conflicting field is a `FieldManagerConflict` cause.
 */
export function conflictError(conflicts: readonly ManagerConflict[]): ConflictError {
  const sorted = [...conflicts].sort((a, b) => order(a.manager, b.manager));
  const causes: StatusCause[] = [];
  const blocks: string[] = [];
  for (const { manager, fields } of sorted) {
    const who = describeManager(manager);
    const paths = fields.paths().map(pathString);
    blocks.push(`conflicts with ${who}:`, ...paths.map((p) => `- ${p}`));
    for (const field of paths)
      causes.push({ reason: 'FieldManagerConflict', field, message: `conflict with ${who}` });
  }
  const [only] = causes;
  const message =
    causes.length === 1 && only !== undefined
      ? `Apply failed with 1 conflict: ${only.message}: ${only.field}`
      : `Apply failed with ${causes.length} conflicts: ${blocks.join('\n')}`;
  return applyConflict(message, causes);
}
