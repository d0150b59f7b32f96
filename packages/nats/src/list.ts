import {
  BadRequestError,
  ExpiredError,
  type KubeObject,
  type ListOptions,
  type ObjectList,
  objectSelector,
  typeId,
} from '@converge/runtime';
import type { TypeBucket } from './bucket.ts';
import type { BackendContext } from './context.ts';
import { readSnapshot, YIELD_EVERY, yieldToEventLoop } from './snapshot.ts';

const DECIMAL = /^(0|[1-9][0-9]*)$/;

/** A requested resourceVersion as a revision: undefined for '' and absent, 0 for '0'. */
export function parseRevision(value: unknown, what: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || !DECIMAL.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new BadRequestError(`invalid ${what} ${JSON.stringify(value)}: expected a decimal revision`);
  }
  return Number(value);
}

/** Namespace, then name, by code units (the order of Kubernetes' `namespace/name` keys for DNS names). */
export function compareObjects(a: KubeObject, b: KubeObject): number {
  const an = a.metadata.namespace ?? '';
  const bn = b.metadata.namespace ?? '';
  if (an !== bn) return an < bn ? -1 : 1;
  const x = a.metadata.name ?? '';
  const y = b.metadata.name ?? '';
  return x < y ? -1 : x > y ? 1 : 0;
}

function checkLimit(limit: unknown): number | undefined {
  if (limit === undefined || limit === 0) return undefined;
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 0) {
    throw new BadRequestError(`invalid limit ${String(limit)}: expected a non-negative integer`);
  }
  return limit;
}

/**
 * Lists one type: a consistent snapshot from one ordered consumer (one namespace's keys when a
 * namespace is given), decoded, filtered by the selectors and sorted by namespace and name. The
 * list's resourceVersion is the snapshot's revision. With `limit`, the rest is held for continue
 * tokens (see {@link ContinueTokens}).
 *
 * `resourceVersion` '' and '0' read the latest state; 'N' (NotOlderThan) also reads the latest
 * state, which is never older than a revision this bucket has had: a revision past the bucket's
 * last one (the bucket was recreated) is an ExpiredError. `resourceVersionMatch: 'Exact'` can only
 * be served at the latest revision; an older one is an ExpiredError (history is per key, not a
 * snapshot per revision).
 */
export async function listObjects(
  ctx: BackendContext,
  bucket: TypeBucket,
  options: ListOptions,
): Promise<ObjectList> {
  const { namespace = '', labelSelector = '', fieldSelector = '', shardSelector = '' } = options;
  const limit = checkLimit(options.limit);
  const matches = objectSelector({ namespace, labelSelector, fieldSelector, shardSelector });
  const scope = JSON.stringify([typeId(bucket.type), namespace, labelSelector, fieldSelector, shardSelector]);
  if (options.continue !== undefined && options.continue !== '') {
    if (typeof options.continue !== 'string')
      throw new BadRequestError('the continue token must be a string');
    return toList(ctx.continueTokens.next(scope, options.continue, limit));
  }
  const requested = parseRevision(options.resourceVersion, 'resourceVersion');
  const match = options.resourceVersionMatch;
  if (match !== undefined && match !== 'NotOlderThan' && match !== 'Exact') {
    throw new BadRequestError(`invalid resourceVersionMatch ${JSON.stringify(match)}`);
  }
  if (match !== undefined && requested === undefined) {
    throw new BadRequestError('resourceVersionMatch is forbidden unless resourceVersion is provided');
  }
  const snapshot = await readSnapshot(
    ctx.js,
    bucket,
    namespace === '' ? undefined : namespace,
    options.signal,
  );
  if (requested !== undefined && requested > snapshot.revision) {
    throw new ExpiredError(
      `resourceVersion ${requested} is newer than the last revision ${snapshot.revision} of bucket ${bucket.name}: the bucket was purged or recreated`,
    );
  }
  if (match === 'Exact' && requested !== snapshot.revision && requested !== 0) {
    throw new ExpiredError(
      `resourceVersion ${String(requested)} is not the latest revision ${snapshot.revision} of bucket ${bucket.name}; only the latest can be listed`,
    );
  }
  const items: KubeObject[] = [];
  let count = 0;
  for (const entry of snapshot.entries.values()) {
    const decoded = bucket.decode(entry);
    if (decoded.kind === 'malformed') ctx.reportMalformed(decoded.error);
    else if (decoded.kind === 'object' && matches(decoded.object)) items.push(decoded.object);
    if (++count % YIELD_EVERY === 0) await yieldToEventLoop();
  }
  items.sort(compareObjects);
  const revision = String(snapshot.revision);
  if (limit === undefined) return { items, resourceVersion: revision };
  return toList(ctx.continueTokens.first(scope, revision, items, limit));
}

function toList(page: ReturnType<BackendContext['continueTokens']['first']>): ObjectList {
  return {
    items: page.items,
    resourceVersion: page.revision,
    ...(page.continue === undefined ? {} : { continue: page.continue, remainingItemCount: page.remaining }),
  };
}
