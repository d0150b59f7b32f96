import { randomUUID } from 'node:crypto';
import type { KubeObject, ResourceType, StatusCause } from '@converge/runtime';
import type { Draft } from './draft.ts';
import { fieldError } from './errors.ts';
import { equalExcept, type JsonObject, rfc3339, withMutableMeta } from './json.ts';

const SPEC_LIKE_SKIP: ReadonlySet<string> = new Set(['metadata', 'status']);
const SERVER_SET = [
  'uid',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'generation',
  'selfLink',
];

/** Whether the type tracks `metadata.generation`. */
export function tracksGeneration(type: ResourceType): boolean {
  return type.generation !== false;
}

/**
 * The create strategy: wipes server-set metadata and sets uid, creationTimestamp and (if tracked)
 * generation 1; drops `.status` when status is a subresource. `newUid` makes the uid (default
 * `crypto.randomUUID`).
 */
export function prepareCreate(
  type: ResourceType,
  draft: Draft,
  nowMs: number,
  newUid: () => string = randomUUID,
): void {
  const meta = draft.metadata;
  for (const field of SERVER_SET) delete meta[field];
  meta.uid = newUid();
  meta.creationTimestamp = rfc3339(nowMs);
  if (tracksGeneration(type)) meta.generation = 1;
  if (type.statusSubresource === true) delete draft.status;
}

/**
 * The update strategy for the main resource: keeps the old status (status subresource), fills and
 * checks the immutable uid, preserves creationTimestamp / deletion fields, copies the generation and
 * bumps it when anything outside metadata and status changed, and forbids new finalizers on a
 * terminating object. Returns field causes of what the update may not do.
 */
export function prepareUpdate(type: ResourceType, prev: KubeObject, draft: Draft): StatusCause[] {
  const causes: StatusCause[] = [];
  const meta = draft.metadata;
  const old = prev.metadata;
  const prevObject = prev as unknown as JsonObject;
  if (type.statusSubresource === true) {
    if (prevObject.status === undefined) delete draft.status;
    else draft.status = prevObject.status;
  }
  if (meta.uid === undefined || meta.uid === '') meta.uid = old.uid;
  else if (meta.uid !== old.uid)
    causes.push(fieldError.invalid('metadata.uid', meta.uid, 'field is immutable'));
  copyField(meta, old, 'creationTimestamp');
  copyField(meta, old, 'deletionTimestamp');
  copyField(meta, old, 'deletionGracePeriodSeconds');
  delete meta.selfLink;
  if (tracksGeneration(type)) {
    const generation = old.generation ?? 1;
    meta.generation = equalExcept(draft, prevObject, SPEC_LIKE_SKIP) ? generation : generation + 1;
  } else {
    delete meta.generation;
  }
  if (old.deletionTimestamp !== undefined) {
    const before = new Set(old.finalizers ?? []);
    const added = ((meta.finalizers ?? []) as string[]).filter((f) => !before.has(f));
    if (added.length > 0) {
      const list = added.map((f) => JSON.stringify(f)).join(', ');
      causes.push(
        fieldError.forbidden(
          'metadata.finalizers',
          `no new finalizers can be added if the object is being deleted, found new finalizers []string{${list}}`,
        ),
      );
    }
  }
  return causes;
}

/**
 * The status strategy: the old object with only `.status` taken from the draft (labels, spec,
 * finalizers sent along are ignored).
 */
export function prepareStatusUpdate(prev: KubeObject, draft: Draft): Draft {
  const next = withMutableMeta(prev) as Draft;
  if (draft.status === undefined) delete next.status;
  else next.status = draft.status;
  return next;
}

function copyField(meta: JsonObject, old: object, field: string): void {
  const value = (old as JsonObject)[field];
  if (value === undefined) delete meta[field];
  else meta[field] = value;
}
