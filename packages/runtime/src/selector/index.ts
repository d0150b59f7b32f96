/**
 * Selectors: Kubernetes label and field selectors in their string syntax, parsed once into
 * matchers, plus the object form of label selectors and a whole-object predicate for lists and
 * watches. Semantics follow kube-apiserver: `!=` and `notin` match objects without the label, `in`
 * needs it, an empty selector matches everything, and every parse error is a 400
 * ({@link BadRequestError}).
 *
 * - {@link parseLabelSelector} — `app=web,tier in (a,b),!canary,replicas>2` → {@link LabelSelectorExpr}
 * - {@link labelSelectorFromObject} — `{ matchLabels, matchExpressions }` → the same
 * - {@link parseFieldSelector} — `metadata.name=web,metadata.namespace!=kube-system` →
 *   {@link FieldSelectorExpr}, with apimachinery's `\,` `\=` `\\` escaping
 * - {@link parseShardSelector} — KEP-5866 `shardRange(object.metadata.uid, '0x…', '0x…') || …` →
 *   {@link ShardSelectorExpr} (64-bit FNV-1a of the uid or namespace in `[start, end)`);
 *   {@link shardSelectorFor} writes the selector of shard i of n, {@link matchesShard} tests one object
 * - {@link objectSelector} — namespace + label + field + shard selection of whole objects
 *
 * @example
 * const selected = objectSelector({ namespace: 'default', labelSelector: 'app=web', fieldSelector: 'metadata.name!=old' });
 * const items = all.filter(selected);
 *
 * @module
 */
export { escapeFieldSelectorValue } from './field-escape.ts';
export { DEFAULT_SELECTABLE_FIELDS, type FieldSelectorExpr, parseFieldSelector } from './field-selector.ts';
export { fieldValueAtPath } from './field-value.ts';
export { parseLabelSelector } from './label-parser.ts';
export type { LabelSelectorExpr } from './label-selector-expr.ts';
export { labelSelectorFromObject } from './label-selector-object.ts';
export { type ObjectSelectorOptions, objectSelector } from './object-selector.ts';
export { fnv1a64, formatBound } from './shard-hash.ts';
export {
  matchesShard,
  parseShardSelector,
  type ShardedObject,
  type ShardField,
  type ShardRange,
  type ShardSelectorExpr,
  shardSelectorFor,
} from './shard-selector.ts';
