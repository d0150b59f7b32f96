/**
 * Kubernetes' rules for label keys and values, as `validation.IsQualifiedName` and
 * `validation.IsValidLabelValue` state them. Internal to the selector module.
 */

const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Longest name part of a key, and longest value. */
export const MAX_NAME_LENGTH = 63;
/** Longest prefix (a DNS subdomain) of a key. */
export const MAX_PREFIX_LENGTH = 253;

/** Why `key` is not a valid label key, or undefined when it is one. */
export function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (slash >= 0) {
    const prefix = key.slice(0, slash);
    if (prefix.length === 0) return 'the prefix before "/" must not be empty';
    if (prefix.length > MAX_PREFIX_LENGTH)
      return `the prefix must be at most ${MAX_PREFIX_LENGTH} characters`;
    if (!DNS_SUBDOMAIN.test(prefix)) {
      return 'the prefix must be a DNS subdomain: lower-case alphanumerics, "-" and ".", starting and ending alphanumeric';
    }
  }
  if (name.length === 0) return 'the name part must not be empty';
  if (name.length > MAX_NAME_LENGTH) return `the name part must be at most ${MAX_NAME_LENGTH} characters`;
  if (!NAME.test(name)) {
    return 'the name part must be alphanumerics, "-", "_" or ".", starting and ending alphanumeric';
  }
  return undefined;
}

/** Why `value` is not a valid label value, or undefined when it is one ('' is valid). */
export function labelValueProblem(value: string): string | undefined {
  if (value.length > MAX_NAME_LENGTH) return `a value must be at most ${MAX_NAME_LENGTH} characters`;
  if (value.length > 0 && !NAME.test(value)) {
    return 'a value must be empty or alphanumerics, "-", "_" or ".", starting and ending alphanumeric';
  }
  return undefined;
}

/** The whitespace selectors tolerate between tokens (as apimachinery's lexer does). */
export function isSelectorWhitespace(ch: string): boolean {
  return ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r';
}

/** `text` without leading and trailing {@link isSelectorWhitespace selector whitespace}. */
export function trimSelectorWhitespace(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isSelectorWhitespace(text.charAt(start))) start++;
  while (end > start && isSelectorWhitespace(text.charAt(end - 1))) end--;
  return text.slice(start, end);
}
