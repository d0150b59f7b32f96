/**
 * Whether `actual` already has everything `desired` sets: every field `desired` has is in `actual`
 * with an equal value, recursively; arrays must have the same length and match element by element;
 * fields only `actual` has (defaults the server filled in, fields other writers own) are ignored.
 * apimachinery calls this `DeepDerivative`.
 *
 * A reconciler that builds the fields it owns and compares them whole with what the server returns
 * sees a difference on every pass once the server has defaulted something (a Service's `clusterIP`,
 * a container's `imagePullPolicy`) — and rewrites the object, and reports an update, every time.
 * Compare with this instead, and write only when it is false.
 *
 * @example
 * createOrUpdate(client, deploymentType, skeleton, (current) =>
 *   deepDerivative(wanted, current) ? current : { ...current, ...wanted },
 * );
 */
export function deepDerivative(desired: unknown, actual: unknown): boolean {
  if (desired === undefined) return true;
  if (Array.isArray(desired)) {
    return (
      Array.isArray(actual) &&
      actual.length === desired.length &&
      desired.every((item, i) => deepDerivative(item, actual[i]))
    );
  }
  if (typeof desired !== 'object' || desired === null) return Object.is(desired, actual);
  if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return false;
  const fields = actual as Readonly<Record<string, unknown>>;
  for (const [key, value] of Object.entries(desired)) {
    if (value === undefined) continue;
    if (!Object.hasOwn(fields, key) || !deepDerivative(value, fields[key])) return false;
  }
  return true;
}
