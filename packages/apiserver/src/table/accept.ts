import { TableOptionsError } from './errors.ts';

/** Which row objects a Table carries (`?includeObject=`): none, PartialObjectMetadata, or the object. */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** A request for a `meta.k8s.io` Table, as negotiated from `Accept`. */
export interface TableRequest {
  /** The `meta.k8s.io` version of the Table (kubectl asks for v1, then v1beta1). */
  readonly version: 'v1' | 'v1beta1';
  /** What each row's `object` holds; `Metadata` unless the query parameter says otherwise. */
  readonly includeObject: IncludeObject;
  /** The response Content-Type: `application/json;as=Table;v=<version>;g=meta.k8s.io`. */
  readonly contentType: string;
}

interface MediaRange {
  readonly type: string;
  readonly params: ReadonlyMap<string, string>;
  readonly q: number;
}

const INCLUDE_OBJECT: readonly IncludeObject[] = ['None', 'Metadata', 'Object'];

/**
 * Reads an `Accept` header as kube-apiserver negotiates it for GET and LIST, and says whether the
 * answer is a Table. Media ranges are tried best quality first (ties in header order); `q=0` is
 * refused. The first acceptable range decides:
 *
 * - `application/json` (or `*∕*`, `application/*`) with `as=Table;g=meta.k8s.io;v=v1|v1beta1` → a Table;
 * - a plain `application/json`, `*∕*`, `application/*` or `application/yaml` → not a Table (undefined);
 * - anything else (protobuf, another `as=`, another Table version) is skipped: kubectl's list
 *   `as=Table;v=v1…,as=Table;v=v1beta1…,application/json` thus falls back in order.
 *
 * `includeObject` is the query parameter (absent, empty or null → `Metadata`); it is only checked
 * when a Table is wanted, as upstream checks it only when converting.
 *
 * @throws {TableOptionsError} (400) for an `includeObject` other than None, Metadata or Object.
 *
 * @example
 * const table = wantsTable(req.headers.accept, url.searchParams.get('includeObject'));
 * if (table) reply(200, table.contentType, toTable({ ...list, includeObject: table.includeObject, tableVersion: table.version }));
 */
export function wantsTable(
  accept: string | undefined,
  includeObject?: string | null,
): TableRequest | undefined {
  for (const range of parseAccept(accept)) {
    const as = range.params.get('as');
    if (as === undefined) {
      if (isJsonLike(range.type) || range.type === 'application/yaml') return undefined;
      continue;
    }
    const version = range.params.get('v');
    if (
      as === 'Table' &&
      range.params.get('g') === 'meta.k8s.io' &&
      isJsonLike(range.type) &&
      (version === 'v1' || version === 'v1beta1')
    ) {
      return {
        version,
        includeObject: parseIncludeObject(includeObject),
        contentType: `application/json;as=Table;v=${version};g=meta.k8s.io`,
      };
    }
  }
  return undefined;
}

function parseIncludeObject(value: string | null | undefined): IncludeObject {
  if (value === undefined || value === null || value === '') return 'Metadata';
  const known = INCLUDE_OBJECT.find((option) => option === value);
  if (known === undefined)
    throw new TableOptionsError(`unrecognized includeObject value: ${JSON.stringify(value)}`);
  return known;
}

function isJsonLike(type: string): boolean {
  return type === 'application/json' || type === '*/*' || type === 'application/*';
}

/** Media ranges best first (stable for equal quality), without `q=0` or malformed entries. */
function parseAccept(header: string | undefined): MediaRange[] {
  if (header === undefined) return [];
  const ranges: { range: MediaRange; index: number }[] = [];
  header.split(',').forEach((item, index) => {
    const [type = '', ...params] = item.split(';');
    const normalized = type.trim().toLowerCase();
    if (!/^[^/\s]+\/[^/\s]+$/.test(normalized)) return;
    const map = new Map<string, string>();
    let q = 1;
    for (const param of params) {
      const eq = param.indexOf('=');
      if (eq < 0) continue;
      const name = param.slice(0, eq).trim().toLowerCase();
      const value = param
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
      if (name === 'q') q = Number.isFinite(Number(value)) && value !== '' ? Number(value) : 1;
      else map.set(name, value);
    }
    if (q > 0) ranges.push({ range: { type: normalized, params: map, q }, index });
  });
  return ranges.sort((a, b) => b.range.q - a.range.q || a.index - b.index).map((entry) => entry.range);
}
