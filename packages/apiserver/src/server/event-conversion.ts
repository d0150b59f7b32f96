import type { KubeObject } from '@converge/runtime';
import type { JsonObject, VersionConverter } from './api-resource.ts';

/** Field renames between core/v1 Event (left) and events.k8s.io/v1 Event (right). */
const RENAMES: readonly (readonly [string, string])[] = [
  ['involvedObject', 'regarding'],
  ['message', 'note'],
  ['source', 'deprecatedSource'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'],
  ['lastTimestamp', 'deprecatedLastTimestamp'],
  ['count', 'deprecatedCount'],
  ['reportingComponent', 'reportingController'],
];

const SHARED = ['eventTime', 'series', 'reportingInstance', 'action', 'reason', 'related', 'type'];

/**
 * How Go encodes an unset field of events.k8s.io/v1 Event: the `metav1.Time`/`MicroTime` structs
 * as `null` (`eventTime` has no omitempty, and omitempty never drops a struct), the value structs
 * `regarding` and `deprecatedSource` as `{}`; the omitempty strings and count are left out.
 */
const V1_NULL_TIMES = ['eventTime', 'deprecatedFirstTimestamp', 'deprecatedLastTimestamp'];
const V1_STRUCTS = ['regarding', 'deprecatedSource'];
const V1_OMITTED_EMPTY = ['reportingController', 'reportingInstance', 'action', 'reason', 'note', 'type'];

/** An events.k8s.io/v1 Event as kube-apiserver encodes it: Go's zero values written out (see above). */
export function withEventsV1ZeroValues(event: JsonObject): JsonObject {
  const out: JsonObject = { ...event };
  for (const field of V1_NULL_TIMES) out[field] ??= null;
  for (const field of V1_STRUCTS) out[field] ??= {};
  for (const field of V1_OMITTED_EMPTY) if (out[field] === '') delete out[field];
  if (out.deprecatedCount === 0) delete out.deprecatedCount;
  return out;
}

/**
 * How Go encodes an unset field of core/v1 Event (`k8s.io/api/core/v1` `Event`): the time structs
 * `firstTimestamp`, `lastTimestamp` (`metav1.Time`) and `eventTime` (`MicroTime`) as `null` (their
 * omitempty never drops a struct), the value structs `involvedObject` and `source` as `{}`, the
 * strings without omitempty `reportingComponent` and `reportingInstance` as `""`; the omitempty
 * strings and `count` are left out.
 */
const CORE_NULL_TIMES = ['eventTime', 'firstTimestamp', 'lastTimestamp'];
const CORE_STRUCTS = ['involvedObject', 'source'];
const CORE_EMPTY_STRINGS = ['reportingComponent', 'reportingInstance'];
const CORE_OMITTED_EMPTY = ['reason', 'message', 'type', 'action'];

/** A core/v1 Event as kube-apiserver encodes it: Go's zero values written out (see above). */
function withCoreEventZeroValues(event: JsonObject): JsonObject {
  const out: JsonObject = { ...event };
  for (const field of CORE_NULL_TIMES) out[field] ??= null;
  for (const field of CORE_STRUCTS) out[field] ??= {};
  for (const field of CORE_EMPTY_STRINGS) out[field] ??= '';
  for (const field of CORE_OMITTED_EMPTY) if (out[field] === '') delete out[field];
  if (out.count === 0) delete out.count;
  return out;
}

function isEmptyObject(value: unknown): boolean {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0
  );
}

/**
 * A core/v1 Event as the store keeps it: Go's zero values sent back (`null` times, `""` strings,
 * `{}` structs) are unset, so writing back what was read stores what was there.
 */
function withoutCoreZeroValues(event: JsonObject): JsonObject {
  const out: JsonObject = { ...event };
  for (const field of CORE_NULL_TIMES) if (out[field] === null) delete out[field];
  for (const field of CORE_STRUCTS) if (isEmptyObject(out[field])) delete out[field];
  for (const field of CORE_EMPTY_STRINGS) if (out[field] === '') delete out[field];
  return out;
}

function convert(input: JsonObject, apiVersion: string, from: 0 | 1): JsonObject {
  const out: JsonObject = { apiVersion, kind: 'Event', metadata: input.metadata };
  for (const field of SHARED) if (input[field] !== undefined) out[field] = input[field];
  for (const pair of RENAMES) {
    const value = input[pair[from]];
    if (value !== undefined) out[pair[from === 0 ? 1 : 0]] = value;
  }
  return out;
}

/** What a `null` time means in a request body: unset (Go decodes it to the zero value). */
function withoutNullTimes(event: JsonObject): JsonObject {
  const out: JsonObject = { ...event };
  for (const field of V1_NULL_TIMES) if (out[field] === null) delete out[field];
  return out;
}

/**
 * Serves `events.k8s.io/v1` Events as a view of the stored core/v1 Events, as kube-apiserver does:
 * `regarding` ↔ `involvedObject`, `note` ↔ `message`, `deprecated*` ↔ the old counters and
 * timestamps, `reportingController` ↔ `reportingComponent`. Served with Go's zero values written
 * out ({@link withEventsV1ZeroValues}: `eventTime: null` for an Event recorded through core/v1).
 */
export const eventsV1Converter: VersionConverter = {
  toStorage(object: JsonObject): JsonObject {
    return withoutCoreZeroValues(convert(withoutNullTimes(object), 'v1', 1));
  },
  fromStorage(object: KubeObject): JsonObject {
    return withEventsV1ZeroValues(convert(object as unknown as JsonObject, 'events.k8s.io/v1', 0));
  },
};

/**
 * Serves core/v1 Events (the stored version) with Go's zero values written out
 * ({@link withCoreEventZeroValues}: `firstTimestamp: null`, `source: {}`, `reportingComponent: ""`
 * for an Event recorded through events.k8s.io/v1), and stores them without those.
 */
export const coreEventConverter: VersionConverter = {
  toStorage(object: JsonObject): JsonObject {
    return withoutCoreZeroValues(object);
  },
  fromStorage(object: KubeObject): JsonObject {
    return withCoreEventZeroValues(object as unknown as JsonObject);
  },
};

/**
 * The converter between versions of a custom resource with `conversion.strategy: None`: only
 * `apiVersion` changes.
 */
export function apiVersionConverter(served: string, stored: string): VersionConverter {
  return {
    toStorage(object: JsonObject): JsonObject {
      return { ...object, apiVersion: stored };
    },
    fromStorage(object: KubeObject): JsonObject {
      return { ...(object as unknown as JsonObject), apiVersion: served };
    },
  };
}
