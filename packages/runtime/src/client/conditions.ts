/** A status condition (`metav1.Condition`). */
export interface Condition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  /** The metadata.generation the condition was computed from. */
  readonly observedGeneration?: number;
  /** RFC 3339; changes only when `status` changes. */
  readonly lastTransitionTime: string;
  /** CamelCase machine-readable reason. */
  readonly reason: string;
  readonly message: string;
}

/** What a caller sets; `lastTransitionTime` is filled in. */
export type ConditionInput = Omit<Condition, 'lastTransitionTime'> & { readonly lastTransitionTime?: string };

/**
 * Returns `conditions` with `condition` set (apimachinery's `SetStatusCondition`): added if its
 * type is new; otherwise replaced, keeping `lastTransitionTime` unless `status` changed. `nowMs`
 * comes from the caller's clock. The result is a new array; the input is not modified.
 *
 * @example
 * status.conditions = setStatusCondition(status.conditions, {
 *   type: 'Ready', status: 'True', reason: 'Available', message: '', observedGeneration: obj.metadata.generation,
 * }, clock.now());
 */
export function setStatusCondition(
  conditions: readonly Condition[] | undefined,
  condition: ConditionInput,
  nowMs: number,
): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === condition.type);
  const now = new Date(Math.floor(nowMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  const existing = i >= 0 ? list[i] : undefined;
  const lastTransitionTime =
    existing !== undefined && existing.status === condition.status
      ? existing.lastTransitionTime
      : (condition.lastTransitionTime ?? now);
  const next: Condition = {
    type: condition.type,
    status: condition.status,
    ...(condition.observedGeneration === undefined
      ? {}
      : { observedGeneration: condition.observedGeneration }),
    lastTransitionTime,
    reason: condition.reason,
    message: condition.message,
  };
  if (i >= 0) list[i] = next;
  else list.push(next);
  return list;
}

/** The condition of that type, if present. */
export function findStatusCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** True if the condition of that type has status True. */
export function isStatusConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findStatusCondition(conditions, type)?.status === 'True';
}

/** Returns `conditions` without the condition of that type. */
export function removeStatusCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}
