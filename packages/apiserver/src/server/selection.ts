import {
  BadRequestError,
  DEFAULT_SELECTABLE_FIELDS,
  fieldValueAtPath,
  type KubeObject,
  objectSelector,
  parseFieldSelector,
  parseLabelSelector,
  parseShardSelector,
} from '@converge/runtime';
import type { RequestContext } from './context.ts';

/** How a list or watch selects objects: what the store filters, and what is left for the server. */
export interface Selection {
  readonly storeOptions: {
    readonly namespace: string;
    readonly labelSelector: string;
    readonly fieldSelector: string;
    /** The KEP-5866 shard selector ('' for none): the store filters by it. */
    readonly shardSelector: string;
  };
  /** A predicate for kind-specific fields the store does not index (`involvedObject.name`, `spec.nodeName`). */
  readonly extra?: (object: KubeObject) => boolean;
}

/** Escapes a field selector value (`\`, `,`, `=`). */
function escapeValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/**
 * Compiles the selectors of a list or watch for a resource: label selectors and
 * `metadata.name`/`metadata.namespace` go to the store; kind-specific selectable fields are
 * matched here. A field the kind does not support is a 400 — `field label not supported: x` for
 * built-ins, `"x" is not a known field selector: only "metadata.name", "metadata.namespace"` for
 * custom resources. `name` (a single-object watch) adds `metadata.name=<name>`.
 *
 * A `shardSelector` (KEP-5866, kube-apiserver's alpha `ShardedListAndWatch`, served here for every
 * resource) goes to the store; a malformed one is a 400 `invalid shard selector: <why>`. It
 * defaults to the request's `shardSelector` parameter ('' or absent: none), so a deletecollection
 * honours it as kube-apiserver's does.
 */
export function listSelection(
  ctx: RequestContext,
  labelSelector: string,
  fieldSelector: string,
  name?: string,
  shardSelector: string = ctx.query.get('shardSelector') ?? '',
): Selection {
  const { resource, target } = ctx;
  parseLabelSelector(labelSelector);
  if (shardSelector !== '') parseShardSelector(shardSelector);
  let fields = fieldSelector;
  if (name !== undefined)
    fields =
      fields === '' ? `metadata.name=${escapeValue(name)}` : `${fields},metadata.name=${escapeValue(name)}`;
  const allowed = [...DEFAULT_SELECTABLE_FIELDS, ...resource.selectableFields];
  let parsed: ReturnType<typeof parseFieldSelector>;
  try {
    parsed = parseFieldSelector(fields, allowed);
  } catch (error) {
    const match = /^field label not supported: (.*)$/.exec((error as Error).message);
    if (match !== null && resource.crd !== undefined) {
      const known = allowed.map((f) => JSON.stringify(f)).join(', ');
      throw new BadRequestError(`${JSON.stringify(match[1])} is not a known field selector: only ${known}`);
    }
    throw error;
  }
  const namespace = resource.namespaced ? target.namespace : '';
  const special = parsed.fields.some((f) => !DEFAULT_SELECTABLE_FIELDS.includes(f));
  if (!special) return { storeOptions: { namespace, labelSelector, fieldSelector: fields, shardSelector } };
  const read = resource.fieldValue ?? fieldValueAtPath;
  const extra = objectSelector({ fieldSelector: fields }, (object, path) => read(object, path), allowed);
  return { storeOptions: { namespace, labelSelector, fieldSelector: '', shardSelector }, extra };
}
