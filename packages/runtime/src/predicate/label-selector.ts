import { OptionsError } from '../errors.ts';

/** The operators of a label selector requirement, spelled as Kubernetes spells them. */
export type LabelSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

/** One requirement of a label selector (`metav1.LabelSelectorRequirement`). */
export interface LabelSelectorRequirement {
  readonly key: string;
  readonly operator: LabelSelectorOperator;
  /** Non-empty for `In` and `NotIn`; empty or absent for `Exists` and `DoesNotExist`. */
  readonly values?: readonly string[];
}

/**
 * A Kubernetes label selector (`metav1.LabelSelector`): every `matchLabels` pair and every
 * `matchExpressions` requirement must hold. An empty selector matches every object.
 */
export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
}

/** Tests a label set against a compiled selector. Missing labels are an empty set. */
export type LabelMatcher = (labels: Readonly<Record<string, string>> | undefined) => boolean;

const OPERATORS: ReadonlySet<string> = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist']);
const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Validates a label selector with Kubernetes' rules and compiles it into a matcher. Keys must be
 * qualified names (`[prefix/]name`, name ≤ 63 characters, prefix a DNS subdomain ≤ 253), values
 * valid label values (≤ 63 characters, alphanumerics with `-`, `_`, `.` inside, or empty); `In` and
 * `NotIn` need at least one value, `Exists` and `DoesNotExist` none. Throws an {@link OptionsError}
 * naming the offending field otherwise.
 *
 * Matching follows `labels.Requirement.Matches`: `In` needs the key with one of the values; `NotIn`
 * passes when the key is absent or has another value; `Exists` / `DoesNotExist` test the key only.
 *
 * @example
 * const matches = compileLabelSelector({
 *   matchLabels: { app: 'web' },
 *   matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['canary'] }],
 * });
 * matches({ app: 'web', tier: 'prod' }); // true
 */
export function compileLabelSelector(selector: LabelSelector): LabelMatcher {
  if (typeof selector !== 'object' || selector === null || Array.isArray(selector)) {
    throw new OptionsError('selector', selector, 'a label selector object');
  }
  const tests: ((labels: Readonly<Record<string, string>>) => boolean)[] = [];
  const { matchLabels, matchExpressions } = selector;

  if (matchLabels !== undefined) {
    if (typeof matchLabels !== 'object' || matchLabels === null || Array.isArray(matchLabels)) {
      throw new OptionsError('selector.matchLabels', matchLabels, 'an object of label key to value');
    }
    for (const [key, value] of Object.entries(matchLabels)) {
      checkKey(`selector.matchLabels[${JSON.stringify(key)}]`, key);
      checkValue(`selector.matchLabels[${JSON.stringify(key)}]`, value);
      tests.push((labels) => Object.hasOwn(labels, key) && labels[key] === value);
    }
  }

  if (matchExpressions !== undefined) {
    if (!Array.isArray(matchExpressions)) {
      throw new OptionsError('selector.matchExpressions', matchExpressions, 'an array of requirements');
    }
    matchExpressions.forEach((requirement: unknown, i) => {
      tests.push(compileRequirement(`selector.matchExpressions[${i}]`, requirement));
    });
  }

  return (labels) => {
    const set = labels ?? {};
    for (const test of tests) if (!test(set)) return false;
    return true;
  };
}

function compileRequirement(
  field: string,
  requirement: unknown,
): (labels: Readonly<Record<string, string>>) => boolean {
  if (typeof requirement !== 'object' || requirement === null) {
    throw new OptionsError(field, requirement, 'a requirement { key, operator, values }');
  }
  const { key, operator, values } = requirement as Partial<LabelSelectorRequirement>;
  checkKey(`${field}.key`, key);
  if (typeof operator !== 'string' || !OPERATORS.has(operator)) {
    throw new OptionsError(`${field}.operator`, operator, "one of 'In', 'NotIn', 'Exists', 'DoesNotExist'");
  }
  if (values !== undefined && !Array.isArray(values)) {
    throw new OptionsError(`${field}.values`, values, 'an array of label values');
  }
  const list: readonly unknown[] = values ?? [];
  list.forEach((value, i) => {
    checkValue(`${field}.values[${i}]`, value);
  });
  const set = new Set(list as readonly string[]);
  switch (operator) {
    case 'In':
    case 'NotIn': {
      if (set.size === 0)
        throw new OptionsError(`${field}.values`, values, `a non-empty array for ${operator}`);
      const wanted = operator === 'In';
      return (labels) => (Object.hasOwn(labels, key) && set.has(labels[key] as string)) === wanted;
    }
    case 'Exists':
    case 'DoesNotExist': {
      if (set.size !== 0) throw new OptionsError(`${field}.values`, values, `no values for ${operator}`);
      const wanted = operator === 'Exists';
      return (labels) => Object.hasOwn(labels, key) === wanted;
    }
  }
}

function checkKey(field: string, key: unknown): asserts key is string {
  const expected = 'a label key: [prefix/]name, name <= 63 alphanumerics with -_. inside';
  if (typeof key !== 'string') throw new OptionsError(field, key, expected);
  const slash = key.indexOf('/');
  const name = slash < 0 ? key : key.slice(slash + 1);
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  if (name.length === 0 || name.length > 63 || !NAME.test(name)) throw new OptionsError(field, key, expected);
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) {
    throw new OptionsError(field, key, `${expected}, prefix a DNS subdomain`);
  }
}

function checkValue(field: string, value: unknown): asserts value is string {
  if (typeof value !== 'string' || value.length > 63 || (value.length > 0 && !NAME.test(value))) {
    throw new OptionsError(field, value, 'a label value: <= 63 alphanumerics with -_. inside, or empty');
  }
}
