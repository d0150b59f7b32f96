import { goJson, isJsonObject } from './json.ts';

/** What identifies a list element: its merge key's value, or the element itself for primitives. */
export type Identify = (item: unknown) => unknown;

/** Identity of primitives. */
export const itself: Identify = (item) => item;

/** Identity by merge key. */
export function byKey(mergeKey: string): Identify {
  return (item) => (isJsonObject(item) && Object.hasOwn(item, mergeKey) ? item[mergeKey] : undefined);
}

/** A string equal for equal identities (JSON values compared by content, key order aside). */
export function identityKey(id: unknown): string {
  if (typeof id === 'string') return `s${id}`;
  return id === undefined ? 'u' : `j${goJson(id)}`;
}

/** The first position of every identity in `list`. */
export function positions(list: readonly unknown[], identify: Identify): Map<string, number> {
  const out = new Map<string, number>();
  list.forEach((item, i) => {
    const key = identityKey(identify(item));
    if (!out.has(key)) out.set(key, i);
  });
  return out;
}

/** Splits `items` into those whose identity appears in `by` and the others, keeping their order. */
export function partition(
  items: readonly unknown[],
  by: readonly unknown[],
  identify: Identify,
): [present: unknown[], absent: unknown[]] {
  const known = positions(by, identify);
  const present: unknown[] = [];
  const absent: unknown[] = [];
  for (const item of items) (known.has(identityKey(identify(item))) ? present : absent).push(item);
  return [present, absent];
}

function sortBy(items: readonly unknown[], rank: (item: unknown) => number): unknown[] {
  return items
    .map((item, i) => ({ item, i, r: rank(item) }))
    .sort((a, b) => (a.r === b.r ? a.i - b.i : a.r < b.r ? -1 : 1))
    .map((e) => e.item);
}

/**
 * The order of a merged list, as strategic merge patch keeps it: the patch's elements in the
 * patch's order (or the `$setElementOrder` list's), the server-only elements in their live order,
 * and the two interleaved so that a server-only element stays before the first patch element that
 * follows it in the live list. The patch's order takes precedence over the live list's.
 */
export function normalizeOrder(
  patchItems: readonly unknown[],
  serverOnly: readonly unknown[],
  patchOrder: readonly unknown[],
  serverOrder: readonly unknown[],
  identify: Identify,
): unknown[] {
  const inPatch = positions(patchOrder, identify);
  const inServer = positions(serverOrder, identify);
  const at = (index: Map<string, number>, item: unknown): number =>
    index.get(identityKey(identify(item))) ?? -1;
  const last = (index: Map<string, number>) => (item: unknown) => {
    const i = at(index, item);
    return i < 0 ? Number.POSITIVE_INFINITY : i;
  };
  const right = sortBy(patchItems, last(inPatch));
  const left = sortBy(serverOnly, last(inServer));
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (j >= right.length) out.push(left[i++]);
    else if (i >= left.length) out.push(right[j++]);
    else {
      const l = at(inServer, left[i]);
      const r = at(inServer, right[j]);
      if (l >= 0 && r >= 0 && l < r) out.push(left[i++]);
      else out.push(right[j++]);
    }
  }
  return out;
}
