import { Buffer } from 'node:buffer';
import {
  BadRequestError,
  ExpiredError,
  type ListOptions,
  type ObjectList,
  TimeoutError,
} from '../../../backend/index.ts';
import type { KubeObject } from '../../../object/index.ts';
import { clone, isJsonObject } from './json.ts';
import { compileSelection } from './selectors.ts';
import type { VersionedStore } from './store.ts';

interface ContinueToken {
  /** The snapshot revision of the first page. */
  readonly rev: number;
  /** The storage key of the last item served. */
  readonly after: string;
}

function encodeToken(token: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: 1, rev: token.rev, after: token.after })).toString('base64url');
}

function decodeToken(text: string): ContinueToken {
  try {
    const data: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (
      isJsonObject(data) &&
      data.v === 1 &&
      Number.isSafeInteger(data.rev) &&
      typeof data.after === 'string'
    ) {
      return { rev: data.rev as number, after: data.after };
    }
  } catch {
    // fall through
  }
  throw new BadRequestError('the continue token is not valid');
}

function parseRevision(rv: string): number {
  if (!/^(0|[1-9][0-9]*)$/.test(rv))
    throw new BadRequestError(`invalid resourceVersion ${JSON.stringify(rv)}`);
  return Number(rv);
}

/** The snapshot revision a list reads at, following Kubernetes' resourceVersion rules. */
function snapshotRevision(store: VersionedStore, options: ListOptions): { rev: number; after?: string } {
  const { continue: token, resourceVersion, resourceVersionMatch, limit } = options;
  if (token !== undefined && token !== '') {
    if (resourceVersion !== undefined && resourceVersion !== '') {
      throw new BadRequestError('specifying resourceVersion is not allowed when using continue');
    }
    const { rev, after } = decodeToken(token);
    if (rev < store.compacted) {
      throw new ExpiredError(
        'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
      );
    }
    return { rev, after };
  }
  if (resourceVersion === undefined || resourceVersion === '' || resourceVersion === '0') {
    if (resourceVersionMatch !== undefined && resourceVersion === undefined) {
      throw new BadRequestError('resourceVersionMatch is forbidden unless resourceVersion is provided');
    }
    return { rev: store.revision };
  }
  const wanted = parseRevision(resourceVersion);
  if (wanted > store.revision) {
    throw new TimeoutError(`Too large resource version: ${wanted}, current: ${store.revision}`, {
      details: { retryAfterSeconds: 1 },
    });
  }
  const exact =
    resourceVersionMatch === 'Exact' || (resourceVersionMatch === undefined && limit !== undefined);
  if (!exact) return { rev: store.revision };
  if (wanted < store.compacted)
    throw new ExpiredError('The resourceVersion for the provided list is too old.');
  return { rev: wanted };
}

/**
 * Lists one type at a consistent snapshot, one page at a time when `limit` is set; each item is
 * handed out as `copy` makes it (default a deep clone; a metadata-only list clones only metadata).
 */
export function listObjects<T extends KubeObject>(
  store: VersionedStore,
  typeId: string,
  options: ListOptions,
  copy: (object: KubeObject) => KubeObject = clone,
): ObjectList<T> {
  const { limit } = options;
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 0)) {
    throw new BadRequestError(`limit must be a non-negative integer, got ${String(limit)}`);
  }
  const matches = compileSelection(options);
  const { rev, after } = snapshotRevision(store, options);
  const selected = store
    .snapshot(typeId, rev)
    .filter(({ key, object }) => (after === undefined || key > after) && matches(object));
  const pageSize = limit === undefined || limit === 0 ? selected.length : limit;
  const page = selected.slice(0, pageSize);
  const remaining = selected.length - page.length;
  const last = page.at(-1);
  const items = page.map(({ object }) => copy(object) as T);
  if (remaining === 0 || last === undefined) return { items, resourceVersion: String(rev) };
  return {
    items,
    resourceVersion: String(rev),
    continue: encodeToken({ rev, after: last.key }),
    remainingItemCount: remaining,
  };
}
