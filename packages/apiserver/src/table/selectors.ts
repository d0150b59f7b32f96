/**
 * Label maps and selectors printed as kubectl's printers print them (apimachinery's
 * `labels.FormatLabels`, `metav1.FormatLabelSelector`, `LabelSelectorAsSelector(…).String()` and
 * the generated `LabelSelector.String()`).
 */
import { arr, at, type Json, obj, str, stringMap } from './fields.ts';
import { compareUtf8 } from './go-format.ts';

/** `labels.FormatLabels`: `k=v` pairs sorted by key, comma-joined; `<none>` when empty. */
export function formatLabels(labels: unknown): string {
  const map = stringMap(labels);
  const text = Object.keys(map)
    .sort(compareUtf8)
    .map((key) => `${key}=${map[key]}`)
    .join(',');
  return text === '' ? '<none>' : text;
}

interface Requirement {
  readonly key: string;
  readonly text: string;
}

/**
 * `metav1.LabelSelectorAsSelector(selector).String()`: requirements sorted by key, `k=v` for
 * matchLabels, `k in (a,b)`, `k notin (a,b)` (values sorted), `k`, `!k`. An absent or empty
 * selector prints as ''. Undefined when the selector is invalid (an unknown operator, values on
 * Exists/DoesNotExist, no values on In/NotIn).
 */
export function selectorString(selector: unknown): string | undefined {
  if (selector === undefined || selector === null) return '';
  const requirements: Requirement[] = [];
  for (const [key, value] of Object.entries(stringMap(at(selector, 'matchLabels')))) {
    requirements.push({ key, text: `${key}=${value}` });
  }
  for (const expression of arr(at(selector, 'matchExpressions'))) {
    const key = str(at(expression, 'key'));
    const values = arr(at(expression, 'values')).map(str);
    const sorted = [...values].sort(compareUtf8).join(',');
    const operator = at(expression, 'operator');
    if (operator === 'In' || operator === 'NotIn') {
      if (values.length === 0) return undefined;
      requirements.push({ key, text: `${key} ${operator === 'In' ? 'in' : 'notin'} (${sorted})` });
    } else if (operator === 'Exists' || operator === 'DoesNotExist') {
      if (values.length > 0) return undefined;
      requirements.push({ key, text: operator === 'Exists' ? key : `!${key}` });
    } else {
      return undefined;
    }
  }
  return requirements
    .sort((a, b) => compareUtf8(a.key, b.key))
    .map((r) => r.text)
    .join(',');
}

/** `metav1.FormatLabelSelector`: the selector string, `<none>` when empty, `<error>` when invalid. */
export function formatLabelSelector(selector: unknown): string {
  const text = selectorString(selector);
  if (text === undefined) return '<error>';
  return text === '' ? '<none>' : text;
}

/**
 * The gogo-generated `(*metav1.LabelSelector).String()` debug form, which the
 * ValidatingAdmissionPolicyBinding printer shows for a `paramRef.selector`:
 * `&LabelSelector{MatchLabels:map[string]string{k: v,},MatchExpressions:[]LabelSelectorRequirement{…},}`.
 */
export function goLabelSelectorDebugString(selector: Json): string {
  const labels = stringMap(selector.matchLabels);
  const map = Object.keys(labels)
    .sort(compareUtf8)
    .map((key) => `${key}: ${labels[key]},`)
    .join('');
  const expressions = arr(selector.matchExpressions)
    .map(obj)
    .map(
      (e) =>
        `LabelSelectorRequirement{Key:${str(e.key)},Operator:${str(e.operator)},Values:[${arr(e.values).map(str).join(' ')}],},`,
    )
    .join('');
  return `&LabelSelector{MatchLabels:map[string]string{${map}},MatchExpressions:[]LabelSelectorRequirement{${expressions}},}`;
}
