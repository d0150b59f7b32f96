import { OptionsError } from '../errors.ts';
import { compileLabelSelector, type LabelSelector } from '../predicate/index.ts';
import type { AdmissionOperation } from './admission.ts';
import type {
  AdmissionWebhookRegistrationOptions,
  MatchCondition,
  ResolvedAdmissionWebhookOptions,
} from './registration.ts';

const KNOWN = new Set([
  'sideEffects',
  'failurePolicy',
  'timeoutSeconds',
  'path',
  'operations',
  'matchConditions',
  'namespaceSelector',
  'objectSelector',
  'reinvocationPolicy',
  'name',
]);
const OPERATIONS: ReadonlySet<string> = new Set(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);
const QUALIFIED_NAME =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** The API server's limit on `matchConditions` per webhook. */
const MAX_MATCH_CONDITIONS = 64;

/** A path the webhook server accepts: starts with `/`, no query, fragment or whitespace. */
export function checkPath(field: string, path: unknown): string {
  if (typeof path !== 'string' || !path.startsWith('/') || /[?#\s]/.test(path) || path.length > 1024) {
    throw new OptionsError(field, path, 'a path starting with / without query, fragment or spaces');
  }
  return path;
}

/** A webhook name the API server accepts: a DNS subdomain of at least three labels, ≤ 253 characters. */
export function checkWebhookName(field: string, name: unknown): string {
  const labels = typeof name === 'string' ? name.split('.') : [];
  if (
    typeof name !== 'string' ||
    name.length > 253 ||
    labels.length < 3 ||
    !labels.every((label) => label.length <= 63 && DNS_LABEL.test(label))
  ) {
    throw new OptionsError(field, name, 'a DNS name of at least three labels (vwebsite.example.com)');
  }
  return name;
}

function oneOf<T extends string>(field: string, value: unknown, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new OptionsError(field, value, allowed.map((a) => `'${a}'`).join(' or '));
  }
  return value as T;
}

function operations(
  field: string,
  value: unknown,
  webhook: 'validating' | 'mutating',
): readonly AdmissionOperation[] {
  if (value === undefined) return Object.freeze(['CREATE', 'UPDATE'] as const);
  if (!Array.isArray(value) || value.length === 0) {
    throw new OptionsError(field, value, 'a non-empty array of CREATE, UPDATE, DELETE, CONNECT');
  }
  const allowed = webhook === 'mutating' ? new Set(['CREATE', 'UPDATE']) : OPERATIONS;
  const seen = new Set<string>();
  value.forEach((op: unknown, i) => {
    if (typeof op !== 'string' || !allowed.has(op)) {
      throw new OptionsError(
        `${field}[${i}]`,
        op,
        webhook === 'mutating'
          ? "'CREATE' or 'UPDATE' (a defaulter is never called for DELETE or CONNECT)"
          : "'CREATE', 'UPDATE', 'DELETE' or 'CONNECT'",
      );
    }
    if (seen.has(op)) throw new OptionsError(`${field}[${i}]`, op, 'each operation once');
    seen.add(op);
  });
  return Object.freeze([...seen] as AdmissionOperation[]);
}

function matchConditions(field: string, value: unknown): readonly MatchCondition[] {
  if (value === undefined) return Object.freeze([]);
  if (!Array.isArray(value) || value.length > MAX_MATCH_CONDITIONS) {
    throw new OptionsError(field, value, `an array of at most ${MAX_MATCH_CONDITIONS} { name, expression }`);
  }
  const names = new Set<string>();
  return Object.freeze(
    value.map((condition: unknown, i) => {
      const at = `${field}[${i}]`;
      if (typeof condition !== 'object' || condition === null || Array.isArray(condition)) {
        throw new OptionsError(at, condition, 'a { name, expression } object');
      }
      const { name, expression } = condition as Partial<MatchCondition>;
      const shortName = typeof name === 'string' ? (name.split('/').pop() ?? '') : '';
      if (typeof name !== 'string' || !QUALIFIED_NAME.test(name) || shortName.length > 63) {
        throw new OptionsError(`${at}.name`, name, 'a qualified name ([prefix/]name, name ≤ 63 characters)');
      }
      if (names.has(name)) throw new OptionsError(`${at}.name`, name, 'a name unique within the webhook');
      names.add(name);
      if (typeof expression !== 'string' || expression.trim() === '' || expression.length > 10_240) {
        throw new OptionsError(`${at}.expression`, expression, 'a CEL expression (at most 10240 characters)');
      }
      return Object.freeze({ name, expression });
    }),
  );
}

function selector(field: string, value: unknown): LabelSelector | undefined {
  if (value === undefined) return undefined;
  try {
    compileLabelSelector(value as LabelSelector);
  } catch (error) {
    if (!(error instanceof OptionsError)) throw error;
    throw new OptionsError(
      `${field}${error.field.replace(/^selector/, '')}`,
      error.value,
      'a label selector: matchLabels of label keys to values, matchExpressions of { key, operator, values }',
    );
  }
  // A clean copy: only the fields a configuration carries, nothing the caller can change later.
  const { matchLabels, matchExpressions } = value as LabelSelector;
  return Object.freeze({
    ...(matchLabels === undefined ? {} : { matchLabels: Object.freeze({ ...matchLabels }) }),
    ...(matchExpressions === undefined
      ? {}
      : {
          matchExpressions: Object.freeze(
            matchExpressions.map(({ key, operator, values }) =>
              Object.freeze({
                key,
                operator,
                ...(values === undefined ? {} : { values: Object.freeze([...values]) }),
              }),
            ),
          ),
        }),
  });
}

/**
 * Checks registration options (an {@link OptionsError} names the first bad field; unknown fields
 * are refused, so a typo never silently falls back to a default) and fills in the defaults.
 */
export function resolveAdmissionOptions(
  webhook: 'validating' | 'mutating',
  options: AdmissionWebhookRegistrationOptions | undefined,
  where: string,
): ResolvedAdmissionWebhookOptions & {
  readonly path: string | undefined;
  readonly name: string | undefined;
} {
  if (options === undefined) options = {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new OptionsError(where, options, 'an options object');
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key))
      throw new OptionsError(`${where}.${key}`, key, `a known option (${[...KNOWN].join(', ')})`);
  }
  const timeoutSeconds = options.timeoutSeconds ?? 10;
  if (
    typeof timeoutSeconds !== 'number' ||
    !Number.isInteger(timeoutSeconds) ||
    timeoutSeconds < 1 ||
    timeoutSeconds > 30
  ) {
    throw new OptionsError(`${where}.timeoutSeconds`, options.timeoutSeconds, 'an integer from 1 to 30');
  }
  if (webhook === 'validating' && options.reinvocationPolicy !== undefined) {
    throw new OptionsError(
      `${where}.reinvocationPolicy`,
      options.reinvocationPolicy,
      'nothing: only mutating webhooks are reinvoked',
    );
  }
  return Object.freeze({
    sideEffects: oneOf(`${where}.sideEffects`, options.sideEffects, ['None', 'NoneOnDryRun'], 'None'),
    failurePolicy: oneOf(`${where}.failurePolicy`, options.failurePolicy, ['Fail', 'Ignore'], 'Fail'),
    timeoutSeconds,
    operations: operations(`${where}.operations`, options.operations, webhook),
    matchConditions: matchConditions(`${where}.matchConditions`, options.matchConditions),
    namespaceSelector: selector(`${where}.namespaceSelector`, options.namespaceSelector),
    objectSelector: selector(`${where}.objectSelector`, options.objectSelector),
    reinvocationPolicy: oneOf(
      `${where}.reinvocationPolicy`,
      options.reinvocationPolicy,
      ['Never', 'IfNeeded'],
      'Never',
    ),
    path: options.path === undefined ? undefined : checkPath(`${where}.path`, options.path),
    name: options.name === undefined ? undefined : checkWebhookName(`${where}.name`, options.name),
  });
}
