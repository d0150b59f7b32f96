import { BadRequestError, type SelectorOptions } from '../backend/index.ts';
import { describe } from '../errors.ts';
import type { KubeObject } from '../object/index.ts';
import { DEFAULT_SELECTABLE_FIELDS, parseFieldSelector } from './field-selector.ts';
import { fieldValueAtPath } from './field-value.ts';
import { parseLabelSelector } from './label-parser.ts';
import { parseShardSelector } from './shard-selector.ts';

/** {@link SelectorOptions} plus the KEP-5866 shard selector lists and watches take. */
export interface ObjectSelectorOptions extends SelectorOptions {
  /** A shard selector (see {@link parseShardSelector}); undefined or '' selects every shard. */
  readonly shardSelector?: string;
}

/**
 * Compiles {@link ObjectSelectorOptions} — `namespace`, `labelSelector`, `fieldSelector`,
 * `shardSelector` — into one predicate over whole objects, as a list or watch applies them. Parses
 * once; the predicate only compares. Unset or empty parts select everything; a `namespace` of `''` means all namespaces.
 *
 * Field values are read with `fieldValues` (default {@link fieldValueAtPath}, which reads any dotted
 * path). Only `allowedFields` may appear in the field selector (default `metadata.name` and
 * `metadata.namespace`); pass the kind's extra selectable fields there (`spec.nodeName`,
 * `involvedObject.name`, …). A bad selector or an unsupported field throws a
 * {@link BadRequestError} at once, so a server answers 400 before it reads anything.
 *
 * @example
 * const selected = objectSelector({ namespace: 'default', labelSelector: 'app=web' });
 * const page = objects.filter(selected);
 *
 * const pods = objectSelector({ fieldSelector: 'spec.nodeName=node-1' }, fieldValueAtPath, [
 *   ...DEFAULT_SELECTABLE_FIELDS,
 *   'spec.nodeName',
 * ]);
 */
export function objectSelector(
  options: ObjectSelectorOptions,
  fieldValues: (object: KubeObject, path: string) => string | undefined = fieldValueAtPath,
  allowedFields: readonly string[] = DEFAULT_SELECTABLE_FIELDS,
): (object: KubeObject) => boolean {
  const { namespace = '', labelSelector = '', fieldSelector = '', shardSelector = '' } = options;
  if (typeof namespace !== 'string') {
    throw new BadRequestError(`invalid namespace: expected a string, got ${describe(namespace)}`);
  }
  const labels = parseLabelSelector(labelSelector);
  const fields = parseFieldSelector(fieldSelector, allowedFields);
  const shard = shardSelector === '' ? undefined : parseShardSelector(shardSelector);
  const tests: ((object: KubeObject) => boolean)[] = [];
  if (namespace !== '') tests.push((object) => (object.metadata.namespace ?? '') === namespace);
  if (!labels.empty) tests.push((object) => labels.matches(object.metadata.labels));
  if (!fields.empty) tests.push((object) => fields.matches((path) => fieldValues(object, path)));
  if (shard !== undefined) tests.push((object) => shard.matches(object));
  switch (tests.length) {
    case 0:
      return () => true;
    case 1:
      return tests[0] as (object: KubeObject) => boolean;
    default:
      return (object) => tests.every((test) => test(object));
  }
}
