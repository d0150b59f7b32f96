import { notAcceptable } from './errors.ts';

/** One media type with its parameters (lower-cased names), e.g. from `Accept` or `Content-Type`. */
export interface MediaType {
  /** `type/subtype`, lower-cased. */
  readonly type: string;
  readonly params: Readonly<Record<string, string>>;
  /** Quality from `q=` (1 when absent). */
  readonly q: number;
}

/** Parses one media type (`application/json;as=Table;v=v1;g=meta.k8s.io`); undefined if malformed. */
export function parseMediaType(text: string): MediaType | undefined {
  const parts = text.split(';');
  const type = (parts[0] ?? '').trim().toLowerCase();
  if (!/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+*-]+$/.test(type) && type !== '*/*') return undefined;
  const params: Record<string, string> = {};
  let q = 1;
  for (const part of parts.slice(1)) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim().toLowerCase();
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    if (name === 'q') {
      const parsed = Number(value);
      q = Number.isFinite(parsed) ? Math.min(1, Math.max(0, parsed)) : 1;
    } else {
      params[name] = value;
    }
  }
  return { type, params, q };
}

/** Parses an `Accept` header into media ranges, best first (stable for equal quality), without q=0. */
export function parseAccept(header: string | undefined): MediaType[] {
  if (header === undefined || header.trim() === '') return [];
  const ranges: MediaType[] = [];
  for (const item of header.split(',')) {
    const media = parseMediaType(item);
    if (media !== undefined && media.q > 0) ranges.push(media);
  }
  return ranges
    .map((media, index) => ({ media, index }))
    .sort((a, b) => b.media.q - a.media.q || a.index - b.index)
    .map((entry) => entry.media);
}

/** What a response for an object or a list is written as. */
export type ObjectFormat =
  | { readonly format: 'json' }
  | { readonly format: 'yaml' }
  /** A `meta.k8s.io` Table (only when a table converter is installed). */
  | { readonly format: 'table'; readonly version: 'v1' | 'v1beta1' }
  /** `meta.k8s.io/v1` PartialObjectMetadata(List): metadata only. */
  | { readonly format: 'partial' }
  /** `application/vnd.kubernetes.protobuf` (built-in kinds; `;stream=watch` for watches). */
  | { readonly format: 'protobuf' };

const ACCEPTED = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];

function isJsonLike(type: string): boolean {
  return type === 'application/json' || type === '*/*' || type === 'application/*';
}

/**
 * Chooses how to write an object or list for an `Accept` header, as kube-apiserver negotiates:
 * JSON for a missing header, `*∕*` or `application/json`; YAML for `application/yaml`; a Table or
 * PartialObjectMetadata when asked with `as=` and `g=meta.k8s.io` (Tables only if `tables` is true);
 * protobuf for `application/vnd.kubernetes.protobuf` when `protobuf` is true (a built-in kind),
 * else skipped (answered as JSON when JSON is also acceptable). Nothing acceptable → 406.
 */
export function negotiateObject(accept: string | undefined, tables: boolean, protobuf = false): ObjectFormat {
  const ranges = parseAccept(accept);
  if (ranges.length === 0) return { format: 'json' };
  for (const range of ranges) {
    const as = range.params.as;
    if (as !== undefined) {
      if (range.params.g !== 'meta.k8s.io' || !isJsonLike(range.type)) continue;
      const version = range.params.v;
      if (as === 'Table' && tables && (version === 'v1' || version === 'v1beta1')) {
        return { format: 'table', version };
      }
      if ((as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') && version === 'v1') {
        return { format: 'partial' };
      }
      continue;
    }
    if (isJsonLike(range.type)) return { format: 'json' };
    if (range.type === 'application/yaml') return { format: 'yaml' };
    if (range.type === 'application/vnd.kubernetes.protobuf' && protobuf) return { format: 'protobuf' };
  }
  throw notAcceptable(ACCEPTED);
}

/** Whether an `Accept` header asks for aggregated discovery of `version` (`v2` or `v2beta1`). */
export function acceptsAggregatedDiscovery(accept: string | undefined): 'v2' | 'v2beta1' | undefined {
  for (const range of parseAccept(accept)) {
    if (range.type !== 'application/json') continue;
    const { g, v, as } = range.params;
    if (g === 'apidiscovery.k8s.io' && as === 'APIGroupDiscoveryList' && (v === 'v2' || v === 'v2beta1')) {
      return v;
    }
    if (as === undefined) return undefined;
  }
  return undefined;
}
