/** Equality of two string maps; a missing map equals an empty one. */
export function stringMapEqual(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  if (a === b) return true;
  const aKeys = a === undefined ? [] : Object.keys(a);
  const bKeys = b === undefined ? [] : Object.keys(b);
  if (aKeys.length !== bKeys.length) return false;
  for (const key of aKeys) {
    if (b === undefined || !Object.hasOwn(b, key) || b[key] !== a?.[key]) return false;
  }
  return true;
}
