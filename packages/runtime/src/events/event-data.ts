import { describe } from '../errors.ts';
import type { KubeObject } from '../object/index.ts';
import { EventInvalidError } from './errors.ts';
import type { EventType, ObjectReference } from './event-types.ts';
import {
  FIELD_LIMIT,
  NOTE_LIMIT_BYTES,
  objectReference,
  referenceIdentity,
  truncateChars,
  truncateUtf8,
} from './format.ts';

/** An event's content after validation and truncation. */
export interface EventData {
  readonly regarding: ObjectReference;
  readonly related: ObjectReference | undefined;
  readonly type: EventType;
  readonly reason: string;
  readonly action: string;
  readonly note: string;
  /** The namespace the Event lives in: the regarding object's, or `default` for cluster-scoped ones. */
  readonly namespace: string;
}

function isObject(value: unknown): value is KubeObject {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { metadata?: unknown }).metadata === 'object' &&
    (value as { metadata?: unknown }).metadata !== null
  );
}

/**
 * Checks what `event()` was given (callers may be plain JavaScript) and brings it within the
 * API's limits: reason and action cut to 128 characters, the note to 1 KiB of UTF-8. Throws an
 * {@link EventInvalidError} for what no API server would accept.
 */
export function eventData(
  regarding: unknown,
  type: unknown,
  reason: unknown,
  action: unknown,
  note: unknown,
  related: unknown,
): EventData {
  if (!isObject(regarding)) throw new EventInvalidError('regarding must be an object with metadata');
  const name = regarding.metadata.name;
  if (typeof name !== 'string' || name === '') {
    throw new EventInvalidError('regarding must have metadata.name');
  }
  if (type !== 'Normal' && type !== 'Warning') {
    throw new EventInvalidError(`type must be Normal or Warning, got ${describe(type)}`);
  }
  if (typeof reason !== 'string' || reason === '') {
    throw new EventInvalidError(`reason must be a non-empty string, got ${describe(reason)}`);
  }
  if (typeof action !== 'string' || action === '') {
    throw new EventInvalidError(`action must be a non-empty string, got ${describe(action)}`);
  }
  if (typeof note !== 'string') throw new EventInvalidError(`note must be a string, got ${describe(note)}`);
  if (related !== undefined && !isObject(related)) {
    throw new EventInvalidError('related must be an object with metadata');
  }
  const namespace = regarding.metadata.namespace;
  return {
    regarding: objectReference(regarding),
    related: related === undefined ? undefined : objectReference(related),
    type,
    reason: truncateChars(reason, FIELD_LIMIT),
    action: truncateChars(action, FIELD_LIMIT),
    note: truncateUtf8(note, NOTE_LIMIT_BYTES),
    namespace: typeof namespace === 'string' && namespace !== '' ? namespace : 'default',
  };
}

/**
 * The aggregation key: the same regarding and related object (resourceVersion aside), type,
 * reason, action and note make one series. The reporting controller is the recorder's own.
 */
export function seriesKey(data: EventData): string {
  return JSON.stringify([
    referenceIdentity(data.regarding),
    referenceIdentity(data.related),
    data.type,
    data.reason,
    data.action,
    data.note,
  ]);
}
