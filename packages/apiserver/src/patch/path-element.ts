import { compareStrings, goJson, isJsonObject, isScalar, ownKeys } from './json.ts';

/**
 * One step of a field path, as structured-merge-diff spells it: a field name (`f:data`), the key
 * fields of an element of a `map` list (`k:{"name":"app"}`), the value of an element of a `set`
 * (`v:"a"`), or the index of an element of an atomic list (`i:0`).
 */
export type PathElement =
  | { readonly kind: 'field'; readonly name: string }
  | { readonly kind: 'key'; readonly fields: readonly (readonly [string, unknown])[] }
  | { readonly kind: 'value'; readonly value: unknown }
  | { readonly kind: 'index'; readonly index: number };

/** A field path from the root of an object. */
export type FieldPath = readonly PathElement[];

/** A field-name element. */
export function fieldElement(name: string): PathElement {
  return { kind: 'field', name };
}

/** A key element; the key fields are sorted by name. */
export function keyElement(fields: readonly (readonly [string, unknown])[]): PathElement {
  return { kind: 'key', fields: [...fields].sort((a, b) => compareStrings(a[0], b[0])) };
}

/** A value element. */
export function valueElement(value: unknown): PathElement {
  return { kind: 'value', value };
}

/** The FieldsV1 spelling of an element, which is also its identity: equal elements, equal strings. */
export function serializeElement(pe: PathElement): string {
  switch (pe.kind) {
    case 'field':
      return `f:${pe.name}`;
    case 'key': {
      const object: Record<string, unknown> = {};
      for (const [name, value] of pe.fields) Object.defineProperty(object, name, { value, enumerable: true });
      return `k:${goJson(object)}`;
    }
    case 'value':
      return `v:${goJson(pe.value)}`;
    case 'index':
      return `i:${pe.index}`;
  }
}

/** Parses a FieldsV1 key (not `.`); undefined when it is not a valid element. */
export function parseElement(text: string): PathElement | undefined {
  const body = text.slice(2);
  if (text.length < 2 || text[1] !== ':') return undefined;
  switch (text.charAt(0)) {
    case 'f':
      return fieldElement(body);
    case 'k': {
      const parsed = parseJson(body);
      if (!isJsonObject(parsed)) return undefined;
      return keyElement(ownKeys(parsed).map((name) => [name, parsed[name]] as const));
    }
    case 'v': {
      const parsed = parseJson(body);
      return parsed === undefined ? undefined : valueElement(parsed);
    }
    case 'i':
      return /^(0|[1-9][0-9]*)$/.test(body) ? { kind: 'index', index: Number(body) } : undefined;
    default:
      return undefined;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

const KIND_ORDER = { field: 0, key: 1, value: 2, index: 3 } as const;

/** The order of FieldsV1 keys: field names, then keys, then values, then indexes, each sorted. */
export function compareElements(a: PathElement, b: PathElement): number {
  if (a.kind !== b.kind) return KIND_ORDER[a.kind] - KIND_ORDER[b.kind];
  if (a.kind === 'field' && b.kind === 'field') return compareStrings(a.name, b.name);
  if (a.kind === 'index' && b.kind === 'index') return Math.sign(a.index - b.index);
  if (a.kind === 'value' && b.kind === 'value') return compareValues(a.value, b.value);
  if (a.kind === 'key' && b.kind === 'key') {
    const n = Math.min(a.fields.length, b.fields.length);
    for (let i = 0; i < n; i++) {
      const [x, y] = [a.fields[i], b.fields[i]];
      if (x === undefined || y === undefined) break;
      const c = compareStrings(x[0], y[0]) || compareValues(x[1], y[1]);
      if (c !== 0) return c;
    }
    return Math.sign(a.fields.length - b.fields.length);
  }
  return 0;
}

function valueRank(value: unknown): number {
  if (typeof value === 'number') return 0;
  if (typeof value === 'string') return 1;
  if (typeof value === 'boolean') return 2;
  if (Array.isArray(value)) return 3;
  if (isJsonObject(value)) return 4;
  return 5;
}

/** structured-merge-diff's total order of values: numbers, strings, booleans, lists, maps, null. */
function compareValues(a: unknown, b: unknown): number {
  const rank = valueRank(a) - valueRank(b);
  if (rank !== 0) return Math.sign(rank);
  if (typeof a === 'number' && typeof b === 'number') return Math.sign(a - b);
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  return compareStrings(goJson(a), goJson(b));
}

/** Go's `%v`/`%q` rendering of a value inside a path string. */
function valueString(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (isScalar(value)) return String(value);
  if (Array.isArray(value)) return `[${value.map(valueString).join(',')}]`;
  if (isJsonObject(value)) {
    return ownKeys(value)
      .map((k) => `${k}=${valueString(value[k])}`)
      .join('');
  }
  return String(value);
}

/** The human spelling of one element: `.name`, `[name="app"]`, `[="value"]`, `[0]`. */
function elementString(pe: PathElement): string {
  switch (pe.kind) {
    case 'field':
      return `.${pe.name}`;
    case 'key':
      return `[${pe.fields.map(([k, v]) => `${k}=${valueString(v)}`).join(',')}]`;
    case 'value':
      return `[=${valueString(pe.value)}]`;
    case 'index':
      return `[${pe.index}]`;
  }
}

/** The human spelling of a path, as in conflict messages: `.spec.containers[name="app"].image`. */
export function pathString(path: FieldPath): string {
  return path.map(elementString).join('');
}
