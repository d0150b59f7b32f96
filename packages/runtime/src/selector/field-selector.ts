import { BadRequestError } from '../backend/index.ts';
import { describe } from '../errors.ts';
import { escapeFieldSelectorValue, unescapeFieldSelectorValue } from './field-escape.ts';
import { trimSelectorWhitespace } from './label-syntax.ts';

/**
 * A parsed field selector (`=`, `==`, `!=` only, comma = AND). Made by {@link parseFieldSelector}.
 *
 * @example
 * const selector = parseFieldSelector('metadata.name=web');
 * selector.matches((path) => (path === 'metadata.name' ? 'web' : undefined)); // true
 */
export interface FieldSelectorExpr {
  /** True for the empty selector, which matches everything. */
  readonly empty: boolean;
  /** The field paths it mentions, sorted, each once. */
  readonly fields: readonly string[];
  /**
   * Whether the values `fieldValue` reports satisfy every term. A field whose value is
   * `undefined` counts as `''`, as in Kubernetes (`metadata.namespace=` selects cluster-scoped objects).
   */
  matches(fieldValue: (path: string) => string | undefined): boolean;
  /** The canonical string form: terms sorted, `==` written `=`, values escaped. */
  toString(): string;
}

/** The fields every kind can be selected by: `metadata.name` and `metadata.namespace`. */
export const DEFAULT_SELECTABLE_FIELDS: readonly string[] = Object.freeze([
  'metadata.name',
  'metadata.namespace',
]);

interface FieldTerm {
  readonly field: string;
  readonly operator: '=' | '!=';
  readonly value: string;
}

/**
 * Parses a field selector in Kubernetes' string syntax: terms `field=value`, `field==value` or
 * `field!=value` joined by commas (AND). Whitespace around fields and values is ignored, empty
 * terms are skipped, and `''` matches everything. In values, `\\`, `\,` and `\=` stand for `\`,
 * `,` and `=` (apimachinery's escaping; see {@link escapeFieldSelectorValue}); any other `\`
 * sequence, or a bare `=` in a value, is an error.
 *
 * Only `allowedFields` may be selected on (default {@link DEFAULT_SELECTABLE_FIELDS}); another field
 * throws a {@link BadRequestError} `field label not supported: <field>`. Every other syntax error
 * is a BadRequestError too.
 *
 * @example
 * const selector = parseFieldSelector('metadata.namespace=default, metadata.name!=web');
 * selector.fields; // ['metadata.name', 'metadata.namespace']
 * const podSelector = parseFieldSelector('spec.nodeName=node-1', ['metadata.name', 'spec.nodeName']);
 */
export function parseFieldSelector(
  text: string,
  allowedFields: readonly string[] = DEFAULT_SELECTABLE_FIELDS,
): FieldSelectorExpr {
  if (typeof text !== 'string') {
    throw new BadRequestError(`invalid field selector: expected a string, got ${describe(text)}`);
  }
  const allowed = new Set(allowedFields);
  const terms: FieldTerm[] = [];
  for (const rawTerm of splitTerms(text)) {
    const term = trimSelectorWhitespace(rawTerm);
    if (term === '') continue;
    terms.push(parseTerm(text, term, allowed));
  }
  return new CompiledFieldSelector(terms);
}

/** Splits at commas that are not escaped by a backslash. */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charAt(i);
    if (ch === '\\') i++;
    else if (ch === ',') {
      terms.push(text.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(text.slice(start));
  return terms;
}

function parseTerm(text: string, term: string, allowed: ReadonlySet<string>): FieldTerm {
  const fail = (problem: string): never => {
    throw new BadRequestError(`invalid field selector ${JSON.stringify(text)}: ${problem}`);
  };
  const split = splitTerm(term);
  if (split === undefined) {
    return fail(
      `cannot understand ${JSON.stringify(term)}; expected field=value, field==value or field!=value`,
    );
  }
  const field = trimSelectorWhitespace(term.slice(0, split.index));
  if (field === '') return fail(`${JSON.stringify(term)} names no field`);
  if (!allowed.has(field)) throw new BadRequestError(`field label not supported: ${field}`);
  const value = unescapeFieldSelectorValue(
    trimSelectorWhitespace(term.slice(split.index + split.operator.length)),
  );
  if (typeof value !== 'string') return fail(`in ${JSON.stringify(term)}: ${value.problem}`);
  return { field, operator: split.operator === '!=' ? '!=' : '=', value };
}

/** The first unescaped operator of a term; at each offset `!=` and `==` win over `=`. */
function splitTerm(term: string): { index: number; operator: '!=' | '==' | '=' } | undefined {
  for (let i = 0; i < term.length; i++) {
    const ch = term.charAt(i);
    if (ch === '\\') {
      i++;
      continue;
    }
    if (term.startsWith('!=', i)) return { index: i, operator: '!=' };
    if (term.startsWith('==', i)) return { index: i, operator: '==' };
    if (ch === '=') return { index: i, operator: '=' };
  }
  return undefined;
}

function renderTerm(term: FieldTerm): string {
  return `${term.field}${term.operator}${escapeFieldSelectorValue(term.value)}`;
}

class CompiledFieldSelector implements FieldSelectorExpr {
  readonly empty: boolean;
  readonly fields: readonly string[];
  readonly #terms: readonly FieldTerm[];
  readonly #text: string;

  constructor(terms: readonly FieldTerm[]) {
    const byText = new Map<string, FieldTerm>();
    for (const term of terms) byText.set(renderTerm(term), term);
    const texts = [...byText.keys()].sort();
    this.#terms = texts.map((text) => byText.get(text) as FieldTerm);
    this.#text = texts.join(',');
    this.empty = this.#terms.length === 0;
    this.fields = Object.freeze([...new Set(this.#terms.map((term) => term.field))].sort());
  }

  matches(fieldValue: (path: string) => string | undefined): boolean {
    for (const term of this.#terms) {
      const equal = (fieldValue(term.field) ?? '') === term.value;
      if (equal !== (term.operator === '=')) return false;
    }
    return true;
  }

  toString(): string {
    return this.#text;
  }
}
