/**
 * Field validation of ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding writes, as
 * kube-apiserver 1.32's admissionregistration validation words it: every expression is compiled
 * and a broken one is a `spec.validations[0].expression: Invalid value: "…": compilation failed: …`
 * cause of the 422. Defaults are applied first ({@link defaultPolicy}, {@link defaultBinding}).
 */
import { fieldError, type StatusCause } from '@converge/runtime';
import { matchConditionCauses } from '../match-conditions.ts';
import type { JsonObject } from '../types.ts';
import { type CompiledExpression, compilePolicy } from './compile.ts';
import {
  defaultMatchResources,
  matchResourcesCauses,
  object,
  selectorCauses,
  setDefault,
  strings,
} from './match-causes.ts';
import type { PolicySpec } from './types.ts';

const MAX_AUDIT_ANNOTATIONS = 20;
const MAX_VALUE_EXPRESSION_LENGTH = 5 * 1024;
const REASONS = ['Forbidden', 'Invalid', 'RequestEntityTooLarge', 'Unauthorized'];
const CEL_RESERVED = new Set(
  'true false null in as break const continue else for function if import let loop package namespace return var void while'.split(
    ' ',
  ),
);
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** kube's defaults of a policy: `failurePolicy: Fail`, `matchPolicy: Equivalent`, empty selectors, `scope: '*'`. */
export function defaultPolicy(policy: JsonObject): void {
  const spec = object(policy.spec);
  if (spec === undefined) return;
  setDefault(spec, 'failurePolicy', 'Fail');
  const match = object(spec.matchConstraints);
  if (match !== undefined) defaultMatchResources(match);
}

/** kube's defaults of a binding: those of its `matchResources`. */
export function defaultBinding(binding: JsonObject): void {
  const match = object(object(binding.spec)?.matchResources);
  if (match !== undefined) defaultMatchResources(match);
}

function expressionCause(compiled: CompiledExpression, at: string): StatusCause[] {
  return compiled.problem === undefined
    ? []
    : [fieldError.invalid(at, compiled.expression, compiled.problem)];
}

function paramKindCauses(value: unknown): StatusCause[] {
  const at = 'spec.paramKind';
  const kind = object(value);
  if (kind === undefined) return [fieldError.invalid(at, value, 'must be an object')];
  const causes: StatusCause[] = [];
  const apiVersion = kind.apiVersion;
  if (typeof apiVersion !== 'string' || apiVersion === '')
    causes.push(fieldError.required(`${at}.apiVersion`));
  else {
    const parts = apiVersion.split('/');
    const version = parts.length === 1 ? parts[0] : parts[1];
    if (parts.length > 2)
      causes.push(
        fieldError.invalid(`${at}.apiVersion`, apiVersion, `unexpected GroupVersion string: ${apiVersion}`),
      );
    else if (version === undefined || version === '')
      causes.push(fieldError.invalid(`${at}.apiVersion`, apiVersion, 'version must be specified'));
  }
  if (typeof kind.kind !== 'string' || kind.kind === '') causes.push(fieldError.required(`${at}.kind`));
  return causes;
}

/** The field errors of a ValidatingAdmissionPolicy (after {@link defaultPolicy}). */
export function policyCauses(policy: JsonObject): StatusCause[] {
  const spec = object(policy.spec);
  if (spec === undefined) return [fieldError.required('spec.matchConstraints')];
  const causes: StatusCause[] = [];
  if (spec.failurePolicy !== 'Fail' && spec.failurePolicy !== 'Ignore')
    causes.push(fieldError.unsupported('spec.failurePolicy', spec.failurePolicy, ['Fail', 'Ignore']));
  if (spec.paramKind !== undefined && spec.paramKind !== null)
    causes.push(...paramKindCauses(spec.paramKind));
  if (spec.matchConstraints === undefined || spec.matchConstraints === null) {
    causes.push(fieldError.required('spec.matchConstraints'));
  } else {
    causes.push(...matchResourcesCauses(spec.matchConstraints, 'spec.matchConstraints'));
    const rules = object(spec.matchConstraints)?.resourceRules;
    if (!Array.isArray(rules) || rules.length === 0)
      causes.push(fieldError.required('spec.matchConstraints.resourceRules'));
  }
  for (const key of ['matchConditions', 'variables', 'validations', 'auditAnnotations']) {
    const value = spec[key];
    if (value !== undefined && value !== null && !Array.isArray(value))
      return [...causes, fieldError.invalid(`spec.${key}`, value, 'must be a list')];
  }
  const compiled = compilePolicy(spec as PolicySpec);
  // names and required expressions as webhooks check them; compilation with this policy's variables
  const conditions = Array.isArray(spec.matchConditions) ? (spec.matchConditions as unknown[]) : [];
  const named = conditions.map((c) => {
    const expression = object(c)?.expression;
    return {
      ...object(c),
      expression: typeof expression === 'string' && expression.trim() !== '' ? 'true' : '',
    };
  });
  causes.push(
    ...matchConditionCauses(spec.matchConditions === undefined ? {} : { matchConditions: named }, 'spec'),
  );
  compiled.matchConditions.forEach((c, i) => {
    if (c.expression.trim() !== '')
      causes.push(...expressionCause(c, `spec.matchConditions[${i}].expression`));
  });
  compiled.variables.forEach((v, i) => {
    const at = `spec.variables[${i}]`;
    if (v.name.trim() === '') causes.push(fieldError.required(`${at}.name`, 'name is not specified'));
    else if (!/^[_a-zA-Z][_a-zA-Z0-9]*$/.test(v.name) || CEL_RESERVED.has(v.name))
      causes.push(fieldError.invalid(`${at}.name`, v.name, 'name is not a valid CEL identifier'));
    if (v.expression.trim() === '')
      causes.push(fieldError.required(`${at}.expression`, 'expression is not specified'));
    else causes.push(...expressionCause(v, `${at}.expression`));
  });
  if (compiled.validations.length === 0 && compiled.auditAnnotations.length === 0) {
    const detail = 'validations or auditAnnotations must contain at least one item';
    causes.push(
      fieldError.required('spec.validations', detail),
      fieldError.required('spec.auditAnnotations', detail),
    );
    return causes;
  }
  const validations = spec.validations as readonly JsonObject[] | undefined;
  compiled.validations.forEach((v, i) => {
    const at = `spec.validations[${i}]`;
    const raw = object(validations?.[i]) ?? {};
    if (v.expression.expression.trim() === '')
      causes.push(fieldError.required(`${at}.expression`, 'expression is not specified'));
    else causes.push(...expressionCause(v.expression, `${at}.expression`));
    const messageExpression = typeof raw.messageExpression === 'string' ? raw.messageExpression : '';
    if (messageExpression !== '' && messageExpression.trim() === '')
      causes.push(
        fieldError.invalid(`${at}.messageExpression`, messageExpression, 'must be non-empty if specified'),
      );
    else if (v.messageExpression !== undefined)
      causes.push(...expressionCause(v.messageExpression, `${at}.messageExpression`));
    if (v.message !== '' && v.message.trim() === '')
      causes.push(fieldError.invalid(`${at}.message`, v.message, 'message must be non-empty if specified'));
    else if (/[\n\r]/.test(v.message.trim()))
      causes.push(fieldError.invalid(`${at}.message`, v.message, 'message must not contain line breaks'));
    if (raw.reason !== undefined && raw.reason !== null && !REASONS.includes(raw.reason as string))
      causes.push(fieldError.unsupported(`${at}.reason`, raw.reason, REASONS));
  });
  if (compiled.auditAnnotations.length > MAX_AUDIT_ANNOTATIONS)
    causes.push(
      fieldError.invalid(
        'spec.auditAnnotations',
        spec.auditAnnotations,
        `must not have more than ${MAX_AUDIT_ANNOTATIONS} auditAnnotations`,
      ),
    );
  const name = String(object(policy.metadata)?.name ?? '');
  const keys = new Set<string>();
  compiled.auditAnnotations.forEach((a, i) => {
    const at = `spec.auditAnnotations[${i}]`;
    if (name === '')
      causes.push(fieldError.invalid(`${at}.key`, a.key, 'requires metadata.name be non-empty'));
    else causes.push(...qualifiedNameCauses(`${name}/${a.key}`, `${at}.key`));
    const expression = a.value.expression;
    if (expression === '')
      causes.push(fieldError.required(`${at}.valueExpression`, 'valueExpression is not specified'));
    else if (expression.length > MAX_VALUE_EXPRESSION_LENGTH)
      causes.push(
        fieldError.required(
          `${at}.valueExpression`,
          `must not exceed ${MAX_VALUE_EXPRESSION_LENGTH} bytes in length`,
        ),
      );
    else causes.push(...expressionCause(a.value, `${at}.valueExpression`));
    if (keys.has(a.key)) causes.push(fieldError.duplicate(`${at}.key`, a.key));
    keys.add(a.key);
  });
  return causes;
}

/** `<prefix>/<name>` as a label key must be: reuses the match condition name check. */
function qualifiedNameCauses(qualified: string, at: string): StatusCause[] {
  return matchConditionCauses({ matchConditions: [{ name: qualified, expression: 'true' }] }, '')
    .filter((c) => c.reason === 'FieldValueInvalid')
    .map((c) => ({ ...c, field: at }));
}

function actionCauses(value: unknown): StatusCause[] {
  const at = 'spec.validationActions';
  const actions = strings(value);
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  actions.forEach((action, i) => {
    if (!['Audit', 'Deny', 'Warn'].includes(action))
      causes.push(fieldError.unsupported(`${at}[${i}]`, action, ['Audit', 'Deny', 'Warn']));
    if (seen.has(action)) causes.push(fieldError.duplicate(`${at}[${i}]`, action));
    seen.add(action);
  });
  if (seen.has('Deny') && seen.has('Warn'))
    causes.push(
      fieldError.invalid(
        at,
        actions,
        'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
      ),
    );
  if (seen.size === 0) causes.push(fieldError.required(at, 'at least one validation action is required'));
  return causes;
}

function paramRefCauses(value: unknown): StatusCause[] {
  if (value === undefined || value === null) return [];
  const at = 'spec.paramRef';
  const ref = object(value);
  if (ref === undefined) return [fieldError.invalid(at, value, 'must be an object')];
  const causes: StatusCause[] = [];
  const name = typeof ref.name === 'string' ? ref.name : '';
  const hasSelector = ref.selector !== undefined && ref.selector !== null;
  if (name !== '') {
    if (name === '.' || name === '..' || /[/%]/.test(name))
      causes.push(fieldError.invalid(`${at}.name`, name, 'may not contain \'/\' or \'%\' or be "." or ".."'));
    if (hasSelector)
      causes.push(fieldError.forbidden(`${at}.name`, 'name and selector are mutually exclusive'));
  }
  if (hasSelector) {
    causes.push(...selectorCauses(ref.selector, `${at}.selector`));
    if (name !== '')
      causes.push(fieldError.forbidden(`${at}.selector`, 'name and selector are mutually exclusive'));
  }
  if (name === '' && !hasSelector)
    causes.push(fieldError.required(at, 'one of name or selector must be specified'));
  const action = ref.parameterNotFoundAction;
  if (action === undefined || action === null || action === '')
    causes.push(fieldError.required(`${at}.parameterNotFoundAction`));
  else if (action !== 'Deny' && action !== 'Allow')
    causes.push(fieldError.unsupported(`${at}.parameterNotFoundAction`, action, ['Deny', 'Allow']));
  return causes;
}

/** The field errors of a ValidatingAdmissionPolicyBinding (after {@link defaultBinding}). */
export function bindingCauses(binding: JsonObject): StatusCause[] {
  const spec = object(binding.spec) ?? {};
  const causes: StatusCause[] = [];
  const policyName = spec.policyName;
  if (typeof policyName !== 'string' || policyName === '')
    causes.push(fieldError.required('spec.policyName'));
  else if (policyName.length > 253 || !DNS_SUBDOMAIN.test(policyName))
    causes.push(
      fieldError.invalid(
        'spec.policyName',
        policyName,
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      ),
    );
  causes.push(...paramRefCauses(spec.paramRef));
  // kube spells this path `matchResouces`
  causes.push(...matchResourcesCauses(spec.matchResources, 'spec.matchResouces'));
  causes.push(...actionCauses(spec.validationActions));
  return causes;
}
