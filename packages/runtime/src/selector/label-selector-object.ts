import { BadRequestError } from '../backend/index.ts';
import { describe } from '../errors.ts';
import type { LabelSelector } from '../predicate/index.ts';
import { type LabelRequirement, labelSelectorExpr } from './label-expr.ts';
import type { LabelSelectorExpr } from './label-selector-expr.ts';
import { labelKeyProblem, labelValueProblem } from './label-syntax.ts';

const OPERATORS = {
  In: 'in',
  NotIn: 'notin',
  Exists: 'exists',
  DoesNotExist: '!',
} as const satisfies Record<string, LabelRequirement['operator']>;

/**
 * Converts the object form of a label selector (`metav1.LabelSelector`: `matchLabels` plus
 * `matchExpressions` with `In`, `NotIn`, `Exists`, `DoesNotExist`) into a {@link LabelSelectorExpr}.
 * Every `matchLabels` pair and every expression must hold; `{}` matches everything. `null` members
 * count as absent, as they do in Kubernetes JSON.
 *
 * Validation follows `metav1.LabelSelectorAsSelector`: keys and values must be valid label keys
 * and values, `In`/`NotIn` need at least one value, `Exists`/`DoesNotExist` none. Anything else
 * throws a {@link BadRequestError} naming the offending field (also in `details.causes`).
 *
 * @example
 * const selector = labelSelectorFromObject({
 *   matchLabels: { app: 'web' },
 *   matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['canary'] }],
 * });
 * selector.toString(); // 'app=web,tier notin (canary)'
 * list(type, { labelSelector: selector.toString() });
 */
export function labelSelectorFromObject(selector: LabelSelector): LabelSelectorExpr {
  if (!isRecord(selector)) invalid('', selector, 'a label selector object { matchLabels, matchExpressions }');
  const requirements: LabelRequirement[] = [];
  const matchLabels: unknown = selector.matchLabels ?? undefined;
  if (matchLabels !== undefined) {
    if (!isRecord(matchLabels)) invalid('matchLabels', matchLabels, 'an object of label key to value');
    for (const [key, value] of Object.entries(matchLabels)) {
      const field = `matchLabels[${JSON.stringify(key)}]`;
      requirements.push({ key: checkKey(field, key), operator: '=', values: [checkValue(field, value)] });
    }
  }
  const matchExpressions: unknown = selector.matchExpressions ?? undefined;
  if (matchExpressions !== undefined) {
    if (!Array.isArray(matchExpressions))
      invalid('matchExpressions', matchExpressions, 'an array of requirements');
    matchExpressions.forEach((expression: unknown, i) => {
      requirements.push(requirementOf(`matchExpressions[${i}]`, expression));
    });
  }
  return labelSelectorExpr(requirements);
}

function requirementOf(field: string, expression: unknown): LabelRequirement {
  if (!isRecord(expression)) invalid(field, expression, 'a requirement { key, operator, values }');
  const key = checkKey(`${field}.key`, expression.key);
  const operatorName = expression.operator;
  if (typeof operatorName !== 'string' || !Object.hasOwn(OPERATORS, operatorName)) {
    invalid(`${field}.operator`, operatorName, "one of 'In', 'NotIn', 'Exists', 'DoesNotExist'");
  }
  const operator = OPERATORS[operatorName as keyof typeof OPERATORS];
  const rawValues: unknown = expression.values ?? [];
  if (!Array.isArray(rawValues)) invalid(`${field}.values`, rawValues, 'an array of label values');
  const values = rawValues.map((value: unknown, i) => checkValue(`${field}.values[${i}]`, value));
  if ((operator === 'in' || operator === 'notin') && values.length === 0) {
    invalid(`${field}.values`, rawValues, `at least one value for operator ${operatorName}`);
  }
  if ((operator === 'exists' || operator === '!') && values.length !== 0) {
    invalid(`${field}.values`, rawValues, `no values for operator ${operatorName}`);
  }
  return { key, operator, values };
}

function checkKey(field: string, key: unknown): string {
  if (typeof key !== 'string') invalid(field, key, 'a label key string');
  const problem = labelKeyProblem(key);
  if (problem !== undefined) invalid(field, key, `a valid label key (${problem})`);
  return key;
}

function checkValue(field: string, value: unknown): string {
  if (typeof value !== 'string') invalid(field, value, 'a label value string');
  const problem = labelValueProblem(value);
  if (problem !== undefined) invalid(field, value, `a valid label value (${problem})`);
  return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(field: string, value: unknown, expected: string): never {
  const where = field === '' ? 'selector' : field;
  const message = `invalid label selector: ${where} must be ${expected}, got ${describe(value)}`;
  throw new BadRequestError(message, {
    details: { causes: [{ reason: 'FieldValueInvalid', message, field: where }] },
  });
}
