import {
  BadRequestError,
  ExpiredError,
  InvalidError,
  type KubeObject,
  type ListOptions,
  type ObjectList,
  type StatusCause,
} from '@converge/runtime';
import { continueExpired, decodeContinue, encodeContinue } from './continue-token.ts';
import type { ServedType, StoreCore } from './core.ts';
import { fieldError } from './errors.ts';
import { namespaceRange } from './keys.ts';
import { parseResourceVersion, waitForRevision } from './resource-version.ts';
import { compileSelector, type Matcher } from './selection.ts';
import type { TypeData } from './type-data.ts';

/** The namespace scope of a list or watch (validated; ignored for cluster-scoped types). */
export function scopeOf(td: ServedType, namespace: unknown): { lo: string; hi: string | undefined } {
  if (namespace !== undefined && typeof namespace !== 'string') {
    throw new BadRequestError(`invalid namespace: ${JSON.stringify(namespace)}`);
  }
  return namespaceRange(td.type.namespaced ? (namespace ?? '') : '');
}

/**
 * Lists objects of one type at one revision: the latest (resourceVersion unset or '0'), at least N
 * (NotOlderThan, waiting up to 3 s for a future N), exactly N (Exact, or a limit with a non-zero
 * resourceVersion and no match, as the apiserver does; 410 once compacted), or the snapshot of a
 * continue token. Pages walk the sorted key index from the token's start key, so a page costs its
 * size, not the size of the type.
 */
export async function listObjects(
  core: StoreCore,
  td: ServedType,
  options: ListOptions,
): Promise<ObjectList> {
  const { lo, hi } = scopeOf(td, options.namespace);
  const matcher = compileSelector(options);
  const limit = options.limit ?? 0;
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 0) {
    throw new BadRequestError(`invalid limit: ${JSON.stringify(limit)}`);
  }
  core.compact();
  let revision: number;
  let start = lo;
  if (options.continue !== undefined && options.continue !== '') {
    const rv = options.resourceVersion ?? '';
    if (rv !== '' && rv !== '0') {
      throw new BadRequestError('specifying resource version is not allowed when using continue');
    }
    const token = decodeContinue(options.continue);
    if (token.revision > core.revision)
      throw new BadRequestError('continue key is not valid: revision from the future');
    if (token.revision < core.timeline.compacted) throw continueExpired();
    revision = token.revision;
    if (token.start > start) start = token.start;
  } else {
    revision = await listRevision(core, options, limit);
  }
  return page(core, td, { revision, start, hi, limit, matcher });
}

async function listRevision(core: StoreCore, options: ListOptions, limit: number): Promise<number> {
  const rv = options.resourceVersion ?? '';
  const match = options.resourceVersionMatch;
  const causes: StatusCause[] = [];
  if (match !== undefined && match !== 'NotOlderThan' && match !== 'Exact') {
    causes.push(fieldError.unsupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan']));
  } else if (match !== undefined && rv === '') {
    causes.push(
      fieldError.forbidden(
        'resourceVersionMatch',
        'resourceVersionMatch is forbidden unless resourceVersion is provided',
      ),
    );
  } else if (match === 'Exact' && rv === '0') {
    causes.push(
      fieldError.forbidden(
        'resourceVersionMatch',
        'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
      ),
    );
  }
  if (causes.length > 0) {
    const cause = causes[0] as StatusCause;
    throw new InvalidError(`ListOptions.meta.k8s.io "" is invalid: ${cause.field}: ${cause.message}`, {
      details: { name: '', group: 'meta.k8s.io', kind: 'ListOptions', causes },
    });
  }
  if (rv === '' || rv === '0') return core.revision;
  const wanted = parseResourceVersion(rv);
  const exact = match === 'Exact' || (match === undefined && limit > 0);
  await waitForRevision(core, wanted, options.signal);
  if (!exact) return core.revision;
  core.compact();
  if (wanted < core.timeline.compacted)
    throw new ExpiredError('The resourceVersion for the provided list is too old.');
  return wanted;
}

interface PageRequest {
  readonly revision: number;
  readonly start: string;
  readonly hi: string | undefined;
  readonly limit: number;
  readonly matcher: Matcher;
}

function page(core: StoreCore, td: TypeData, request: PageRequest): ObjectList {
  const { revision, start, hi, limit, matcher } = request;
  const latest = revision === core.revision;
  const items: KubeObject[] = [];
  let lastKey = '';
  let more = false;
  td.allKeys.walk(start, hi, (key) => {
    const object = latest ? td.latest(key) : td.at(key, revision);
    if (object === undefined || (matcher !== undefined && !matcher(object))) return true;
    if (limit > 0 && items.length === limit) {
      more = true;
      return false;
    }
    items.push(object);
    lastKey = key;
    return true;
  });
  const resourceVersion = String(revision);
  if (!more) return { items, resourceVersion };
  const next = `${lastKey}\u0000`;
  const token = encodeContinue({ revision, start: next });
  if (matcher !== undefined) return { items, resourceVersion, continue: token };
  return {
    items,
    resourceVersion,
    continue: token,
    remainingItemCount: remaining(core, td, revision, next, hi),
  };
}

/**
 * How many objects were live at `revision` in `[from, hi)`: the live count now, corrected by the
 * keys written since `revision` (all in the history window, since the snapshot is).
 */
function remaining(
  core: StoreCore,
  td: TypeData,
  revision: number,
  from: string,
  hi: string | undefined,
): number {
  let count = td.liveKeys.countRange(from, hi);
  if (revision === core.revision) return count;
  const seen = new Set<string>();
  for (let i = td.log.indexAfter(revision); i < td.log.end; i++) {
    const key = (td.log.at(i) as { key: string }).key;
    if (seen.has(key) || key < from || (hi !== undefined && key >= hi)) continue;
    seen.add(key);
    count += (td.at(key, revision) === undefined ? 0 : 1) - (td.latest(key) === undefined ? 0 : 1);
  }
  return count;
}
