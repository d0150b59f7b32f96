import type { LabelSelectorExpr } from './label-selector-expr.ts';

/** The operators of a parsed label requirement. `==` is stored as `=`. */
export type LabelRequirementOperator = '=' | '!=' | 'in' | 'notin' | 'exists' | '!' | '>' | '<';

/** One requirement of a parsed label selector, already validated. */
export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelRequirementOperator;
  /** One value for `=`, `!=`, `>` and `<` (an integer for the last two), one or more for `in` and `notin`, none otherwise. */
  readonly values: readonly string[];
}

type Labels = Readonly<Record<string, string>>;
type Test = (labels: Labels) => boolean;

/** The canonical string form of one requirement. */
export function renderRequirement(requirement: LabelRequirement): string {
  const { key, operator, values } = requirement;
  switch (operator) {
    case '=':
    case '!=':
    case '>':
    case '<':
      return `${key}${operator}${values[0] ?? ''}`;
    case 'in':
    case 'notin':
      // `(,)` is the one spelling of the set holding only the empty value (`()` is an empty set).
      return `${key} ${operator} (${values.length === 1 && values[0] === '' ? ',' : values.join(',')})`;
    case 'exists':
      return key;
    case '!':
      return `!${key}`;
  }
}

function compileRequirement(requirement: LabelRequirement): Test {
  const { key, operator, values } = requirement;
  switch (operator) {
    case '=': {
      const value = values[0] ?? '';
      return (labels) => Object.hasOwn(labels, key) && labels[key] === value;
    }
    case '!=': {
      const value = values[0] ?? '';
      return (labels) => !Object.hasOwn(labels, key) || labels[key] !== value;
    }
    case 'in': {
      const set = new Set(values);
      return (labels) => Object.hasOwn(labels, key) && set.has(labels[key] as string);
    }
    case 'notin': {
      const set = new Set(values);
      return (labels) => !Object.hasOwn(labels, key) || !set.has(labels[key] as string);
    }
    case 'exists':
      return (labels) => Object.hasOwn(labels, key);
    case '!':
      return (labels) => !Object.hasOwn(labels, key);
    case '>':
    case '<': {
      const bound = parseInt64(values[0] ?? '');
      const greater = operator === '>';
      return (labels) => {
        const actual = Object.hasOwn(labels, key) ? parseInt64(labels[key] as string) : undefined;
        if (actual === undefined || bound === undefined) return false;
        return greater ? actual > bound : actual < bound;
      };
    }
  }
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * A base-10 signed 64-bit integer (optional sign, digits, as Go's `strconv.ParseInt`), or undefined
 * when `text` is not one or does not fit.
 */
export function parseInt64(text: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(text)) return undefined;
  const value = BigInt(text);
  return value < INT64_MIN || value > INT64_MAX ? undefined : value;
}

const NO_LABELS: Labels = Object.freeze({});

/** A compiled label selector: requirements in canonical order, each compiled into a test. */
class CompiledLabelSelector implements LabelSelectorExpr {
  readonly empty: boolean;
  readonly #tests: readonly Test[];
  readonly #text: string;

  constructor(requirements: readonly LabelRequirement[]) {
    const byText = new Map<string, LabelRequirement>();
    for (const { key, operator, values } of requirements) {
      const requirement = { key, operator, values: [...new Set(values)].sort(compare) };
      byText.set(renderRequirement(requirement), requirement);
    }
    const ordered = [...byText.entries()].sort(([textA, a], [textB, b]) =>
      a.key === b.key ? compare(textA, textB) : compare(a.key, b.key),
    );
    this.empty = ordered.length === 0;
    this.#tests = ordered.map(([, requirement]) => compileRequirement(requirement));
    this.#text = ordered.map(([text]) => text).join(',');
  }

  matches(labels: Labels | undefined): boolean {
    const set = labels ?? NO_LABELS;
    for (const test of this.#tests) if (!test(set)) return false;
    return true;
  }

  toString(): string {
    return this.#text;
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Builds a selector from validated requirements (AND). Duplicates collapse; the string form lists
 * requirements sorted by key, so equivalent selectors written in another order print the same.
 */
export function labelSelectorExpr(requirements: readonly LabelRequirement[]): LabelSelectorExpr {
  return new CompiledLabelSelector(requirements);
}
