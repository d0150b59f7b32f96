import type { JsonObject } from './api-resource.ts';
import { asObject } from './json-util.ts';

/** The finalizer that keeps a CRD until its custom resources are deleted. */
export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

/** A CRD condition as the apiextensions controllers write it. */
export interface CrdCondition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
}

function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Sets conditions on a status (a fresh copy): an existing condition keeps its
 * `lastTransitionTime` unless its status changes.
 */
export function withConditions(
  status: unknown,
  conditions: readonly CrdCondition[],
  nowMs: number,
): JsonObject {
  const next: JsonObject = { ...(asObject(status) ?? {}) };
  const existing = Array.isArray(next.conditions)
    ? (next.conditions as unknown[]).map((c) => asObject(c) ?? {})
    : [];
  const merged = [...existing];
  for (const condition of conditions) {
    const index = merged.findIndex((c) => c.type === condition.type);
    const before = index < 0 ? undefined : merged[index];
    const lastTransitionTime =
      before !== undefined &&
      before.status === condition.status &&
      typeof before.lastTransitionTime === 'string'
        ? before.lastTransitionTime
        : rfc3339(nowMs);
    const value = { ...condition, lastTransitionTime };
    if (index < 0) merged.push(value);
    else merged[index] = value;
  }
  next.conditions = merged;
  return next;
}

/** The status of a CRD whose deletion started: condition Terminating True. */
export function terminatingCondition(status: unknown, nowMs: number): JsonObject {
  return withConditions(
    status,
    [
      {
        type: 'Terminating',
        status: 'True',
        reason: 'InstanceDeletionPending',
        message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
      },
    ],
    nowMs,
  );
}

/** The status of an established CRD: accepted names, stored versions, NamesAccepted and Established True. */
export function establishedStatus(
  status: unknown,
  names: JsonObject,
  storageVersion: string,
  nowMs: number,
): JsonObject {
  const base = asObject(status) ?? {};
  const stored = Array.isArray(base.storedVersions)
    ? (base.storedVersions as unknown[]).filter((v) => typeof v === 'string')
    : [];
  if (!stored.includes(storageVersion)) stored.push(storageVersion);
  return withConditions(
    { ...base, acceptedNames: names, storedVersions: stored },
    [
      { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' },
      {
        type: 'Established',
        status: 'True',
        reason: 'InitialNamesAccepted',
        message: 'the initial names have been accepted',
      },
    ],
    nowMs,
  );
}

/** The status of a CRD whose names clash with served resources: NamesAccepted False, not Established. */
export function conflictStatus(status: unknown, message: string, nowMs: number): JsonObject {
  return withConditions(
    status,
    [
      { type: 'NamesAccepted', status: 'False', reason: 'NameConflict', message },
      { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' },
    ],
    nowMs,
  );
}
