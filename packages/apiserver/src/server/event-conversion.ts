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

function convert(input: JsonObject, apiVersion: string, from: 0 | 1): JsonObject {
  const out: JsonObject = { apiVersion, kind: 'Event', metadata: input.metadata };
  for (const field of SHARED) if (input[field] !== undefined) out[field] = input[field];
  for (const pair of RENAMES) {
    const value = input[pair[from]];
    if (value !== undefined) out[pair[from === 0 ? 1 : 0]] = value;
  }
  return out;
}

/**
 * Serves `events.k8s.io/v1` Events as a view of the stored core/v1 Events, as kube-apiserver does:
 * `regarding` ↔ `involvedObject`, `note` ↔ `message`, `deprecated*` ↔ the old counters and
 * timestamps, `reportingController` ↔ `reportingComponent`.
 */
export const eventsV1Converter: VersionConverter = {
  toStorage(object: JsonObject): JsonObject {
    return convert(object, 'v1', 1);
  },
  fromStorage(object: KubeObject): JsonObject {
    return convert(object as unknown as JsonObject, 'events.k8s.io/v1', 0);
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
