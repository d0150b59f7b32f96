/**
 * Checks of `defineKind`'s options, with the rules kube-apiserver applies to a CRD's names,
 * versions, printer columns and scale paths, so a kind that passes makes a CRD the server accepts.
 */
import { KindOptionsError } from './errors.ts';

type Json = Readonly<Record<string, unknown>>;

const DNS_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;
const KIND = /^[A-Z][A-Za-z0-9]*$/;
const COLUMN_TYPES = ['string', 'integer', 'number', 'boolean', 'date'];
const COLUMN_FORMATS = ['int32', 'int64', 'float', 'double', 'byte', 'date', 'date-time', 'password'];
const RULE_KEYS = new Set(['rule', 'message', 'messageExpression', 'reason', 'fieldPath', 'optionalOldSelf']);
const COLUMN_KEYS = new Set(['name', 'type', 'jsonPath', 'description', 'priority', 'format']);
const RULE_REASONS = [
  'FieldValueInvalid',
  'FieldValueForbidden',
  'FieldValueRequired',
  'FieldValueDuplicate',
];

const KNOWN = new Set([
  'group',
  'version',
  'kind',
  'plural',
  'singular',
  'shortNames',
  'categories',
  'scope',
  'spec',
  'status',
  'served',
  'storage',
  'deprecated',
  'deprecationWarning',
  'description',
  'printerColumns',
  'scale',
  'validations',
]);

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fail(field: string, problem: string): never {
  throw new KindOptionsError(field, problem);
}

function optionalString(o: Json, key: string, field: string): void {
  if (o[key] !== undefined && typeof o[key] !== 'string') fail(field, 'must be a string');
}

function optionalBoolean(o: Json, key: string, field: string): void {
  if (o[key] !== undefined && typeof o[key] !== 'boolean') fail(field, 'must be a boolean');
}

function names(o: Json, key: string): void {
  const list = o[key];
  if (list === undefined) return;
  if (!Array.isArray(list)) fail(key, 'must be a list of lower-case names');
  const seen = new Set<unknown>();
  list.forEach((name: unknown, i) => {
    if (typeof name !== 'string' || !DNS_LABEL.test(name) || name.length > 63)
      fail(`${key}[${i}]`, 'must be a lower-case DNS label such as "web"');
    if (seen.has(name)) fail(`${key}[${i}]`, `duplicate ${JSON.stringify(name)}`);
    seen.add(name);
  });
}

function jsonPath(value: unknown, field: string, prefixes: readonly string[]): void {
  if (typeof value !== 'string' || value === '' || !prefixes.some((p) => value.startsWith(p)))
    fail(field, `must be a JSON path starting with ${prefixes.map((p) => `"${p}"`).join(' or ')}`);
}

function printerColumns(o: Json): void {
  const list = o.printerColumns;
  if (list === undefined) return;
  if (!Array.isArray(list)) fail('printerColumns', 'must be a list of columns');
  list.forEach((column: unknown, i) => {
    const at = `printerColumns[${i}]`;
    if (!isJson(column)) fail(at, 'must be an object with name, type and jsonPath');
    for (const key of Object.keys(column))
      if (!COLUMN_KEYS.has(key)) fail(`${at}.${key}`, 'is not a field of a printer column');
    if (typeof column.name !== 'string' || column.name.trim() === '')
      fail(`${at}.name`, 'must be a non-empty string');
    if (typeof column.type !== 'string' || !COLUMN_TYPES.includes(column.type))
      fail(`${at}.type`, `must be one of ${COLUMN_TYPES.join(', ')}`);
    jsonPath(column.jsonPath, `${at}.jsonPath`, ['.']);
    optionalString(column, 'description', `${at}.description`);
    if (
      column.format !== undefined &&
      (typeof column.format !== 'string' || !COLUMN_FORMATS.includes(column.format))
    )
      fail(`${at}.format`, `must be one of ${COLUMN_FORMATS.join(', ')}`);
    const p = column.priority;
    if (p !== undefined && (typeof p !== 'number' || !Number.isInteger(p) || p < 0 || p > 2 ** 31 - 1))
      fail(`${at}.priority`, 'must be a non-negative integer');
    if (list.findIndex((c: unknown) => isJson(c) && c.name === column.name) !== i)
      fail(`${at}.name`, `duplicate column ${JSON.stringify(column.name)}`);
  });
}

function scale(o: Json): void {
  const s = o.scale;
  if (s === undefined) return;
  if (!isJson(s)) fail('scale', 'must be an object with specReplicasPath and statusReplicasPath');
  for (const key of Object.keys(s))
    if (key !== 'specReplicasPath' && key !== 'statusReplicasPath' && key !== 'labelSelectorPath')
      fail(`scale.${key}`, 'is not a field of the scale subresource');
  jsonPath(s.specReplicasPath, 'scale.specReplicasPath', ['.spec.']);
  jsonPath(s.statusReplicasPath, 'scale.statusReplicasPath', ['.status.']);
  if (s.labelSelectorPath !== undefined)
    jsonPath(s.labelSelectorPath, 'scale.labelSelectorPath', ['.spec.', '.status.']);
}

function validations(o: Json): void {
  const list = o.validations;
  if (list === undefined) return;
  if (!Array.isArray(list)) fail('validations', 'must be a list of { rule, message? } CEL rules');
  list.forEach((rule: unknown, i) => {
    const at = `validations[${i}]`;
    if (!isJson(rule)) fail(at, 'must be an object with a CEL rule');
    if (typeof rule.rule !== 'string' || rule.rule.trim() === '')
      fail(`${at}.rule`, 'must be a non-empty CEL expression');
    for (const key of ['message', 'messageExpression', 'fieldPath']) {
      optionalString(rule, key, `${at}.${key}`);
      if (typeof rule[key] === 'string' && /[\r\n]/.test(rule[key]))
        fail(`${at}.${key}`, 'must not contain line breaks');
    }
    if (rule.reason !== undefined && (typeof rule.reason !== 'string' || !RULE_REASONS.includes(rule.reason)))
      fail(`${at}.reason`, `must be one of ${RULE_REASONS.join(', ')}`);
    optionalBoolean(rule, 'optionalOldSelf', `${at}.optionalOldSelf`);
    for (const key of Object.keys(rule))
      if (!RULE_KEYS.has(key)) fail(`${at}.${key}`, 'is not a field of a validation rule');
  });
}

/** Throws {@link KindOptionsError} naming the first malformed option. Schemas are checked later. */
export function checkKindOptions(options: unknown): asserts options is Json {
  if (!isJson(options)) fail('options', 'must be an object');
  for (const key of Object.keys(options)) if (!KNOWN.has(key)) fail(key, 'is not an option of defineKind');
  const { group, version, kind, plural, singular } = options;
  if (typeof group !== 'string' || group.length > 253 || !DNS_SUBDOMAIN.test(group))
    fail('group', 'must be a lower-case DNS subdomain with at least one dot, such as example.com');
  if (typeof version !== 'string' || version.length > 63 || !DNS_LABEL.test(version))
    fail('version', 'must be a lower-case DNS label starting with a letter, such as v1alpha1');
  if (typeof kind !== 'string' || !KIND.test(kind) || kind.length > 63)
    fail('kind', 'must be a PascalCase name such as Website');
  for (const [key, value] of [
    ['plural', plural],
    ['singular', singular],
  ] as const) {
    if (value !== undefined && (typeof value !== 'string' || !DNS_LABEL.test(value) || value.length > 63))
      fail(key, 'must be a lower-case DNS label such as websites');
  }
  names(options, 'shortNames');
  names(options, 'categories');
  if (options.scope !== undefined && options.scope !== 'Namespaced' && options.scope !== 'Cluster')
    fail('scope', "must be 'Namespaced' or 'Cluster'");
  if (!isJson(options.spec)) fail('spec', 'must be a TypeBox schema such as Type.Object({ … })');
  if (options.status !== undefined && !isJson(options.status))
    fail('status', 'must be a TypeBox schema such as Type.Object({ … })');
  optionalBoolean(options, 'served', 'served');
  optionalBoolean(options, 'storage', 'storage');
  optionalBoolean(options, 'deprecated', 'deprecated');
  optionalString(options, 'deprecationWarning', 'deprecationWarning');
  optionalString(options, 'description', 'description');
  printerColumns(options);
  scale(options);
  validations(options);
}

/**
 * The default plural of a kind, lower-cased English (`Website` → `websites`, `Policy` →
 * `policies`, `Class` → `classes`), as kubebuilder's default for regular nouns. Irregular plurals
 * need `plural`.
 */
export function defaultPlural(kind: string): string {
  const lower = kind.toLowerCase();
  if (/(s|x|z|ch|sh)$/.test(lower)) return `${lower}es`;
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}
