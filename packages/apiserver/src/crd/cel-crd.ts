/**
 * What kube-apiserver checks of `x-kubernetes-validations` when a CRD is created or updated, after
 * the schema itself is valid: every rule and messageExpression compiles, a rule's `fieldPath`
 * names a field, `oldSelf` is only used where an old value can be correlated, `optionalOldSelf`
 * only with `oldSelf`, and the worst-case cost of each rule (times how often it can run) and of all
 * rules together stays within budget — with kube's field paths and messages.
 */
import type { StatusCause } from '@converge/runtime';
import { type CompiledRule, compileRules, ruleCost, ruleNodes } from './cel-rules.ts';
import { celSchemaTypes } from './cel-types.ts';
import { forbidden, GoLiteral, internal, invalid, path } from './field-errors.ts';
import { goQuote } from './go-format.ts';
import { isObject, jsonEqual, own } from './json.ts';
import { compileSchema, type SchemaNode } from './schema.ts';
import type { StructuralSchema, ValidationRule } from './types.ts';

/** apiextensions' `StaticEstimatedCostLimit`: the worst-case cost one rule may have. */
export const STATIC_COST_LIMIT = 10_000_000;
/** apiextensions' `StaticEstimatedCRDCostLimit`: the worst-case cost of all rules of a schema. */
export const STATIC_CRD_COST_LIMIT = 100_000_000;

/** `%#v` of the internal `apiextensions.ValidationRule`, as kube prints a rule that does not compile. */
export function goValidationRule(rule: ValidationRule): GoLiteral {
  const str = (v: unknown): string => goQuote(typeof v === 'string' ? v : '');
  const ptr = (type: string, v: unknown): string => `(*${type})(${v === undefined ? 'nil' : '0xc000a1c000'})`;
  return new GoLiteral(
    `apiextensions.ValidationRule{Rule:${str(rule.rule)}, Message:${str(rule.message)}, ` +
      `MessageExpression:${str(rule.messageExpression)}, Reason:${ptr('apiextensions.FieldValueErrorReason', rule.reason)}, ` +
      `FieldPath:${str(rule.fieldPath)}, OptionalOldSelf:${ptr('bool', rule.optionalOldSelf)}}`,
  );
}

/** kube's `getCostErrorMessage`. */
export function costErrorMessage(name: string, cost: number, limit: number): string {
  const factor = cost / limit;
  const text =
    factor > 100 ? 'more than 100x' : factor < 1.5 ? `${factor.toFixed(6)}x` : `${factor.toFixed(1)}x`;
  return `${name} exceeds budget by factor of ${text} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

interface Expensive {
  readonly field: string;
  readonly cost: number;
}

/** Rules on nodes CEL cannot type (no `type`, or below such a node): kube's internal error. */
function untypedRuleCauses(root: SchemaNode, at: string, out: StatusCause[]): void {
  const types = celSchemaTypes(root);
  const visit = (node: SchemaNode, where: string, resourceRoot: boolean): void => {
    const rules = node.raw['x-kubernetes-validations'];
    if (Array.isArray(rules) && rules.length > 0 && types.typeOf(node, resourceRoot) === undefined) {
      out.push(
        internal(
          path.child(path.child(at, where), 'x-kubernetes-validations'),
          `rule declared on schema that does not support validation rules type: '${node.type}' x-kubernetes-preserve-unknown-fields: '${node.preserveUnknownFields}'`,
        ),
      );
    }
    for (const [name, child] of node.properties ?? []) {
      visit(child, path.key(path.child(where, 'properties'), name), child.embeddedResource);
    }
    if (node.items !== undefined) visit(node.items, path.child(where, 'items'), node.items.embeddedResource);
    if (typeof node.additionalProperties === 'object') {
      visit(
        node.additionalProperties,
        path.child(where, 'additionalProperties'),
        node.additionalProperties.embeddedResource,
      );
    }
  };
  visit(root, '', true);
}

/** The causes for the rules of one root schema at `at` (`spec.validation.openAPIV3Schema`). */
export function schemaRuleCauses(schema: StructuralSchema, at: string): StatusCause[] {
  const out: StatusCause[] = [];
  const compiled = compileSchema(schema);
  untypedRuleCauses(compiled, at, out);
  const root = compileRules(compiled);
  let total = 0;
  const expensive: Expensive[] = [];
  const observe = (field: string, cost: number): void => {
    total = Math.min(total + cost, 2 ** 64);
    if (cost < STATIC_CRD_COST_LIMIT / 100) return;
    expensive.push({ field, cost });
    expensive.sort((a, b) => b.cost - a.cost);
    if (expensive.length > 4) expensive.length = 4;
  };
  for (const node of ruleNodes(root)) {
    const base = path.child(path.child(at, node.schemaPath), 'x-kubernetes-validations');
    node.rules.forEach((rule: CompiledRule, i) => {
      const field = path.index(base, i);
      if (!rule.fieldPathValid) {
        out.push(
          invalid(path.child(field, 'fieldPath'), rule.rule.fieldPath, 'fieldPath must be a valid path'),
        );
      }
      const cost = ruleCost(node, rule);
      if (cost > STATIC_COST_LIMIT) {
        out.push(
          forbidden(
            path.child(field, 'rule'),
            costErrorMessage('estimated rule cost', cost, STATIC_COST_LIMIT),
          ),
        );
      }
      observe(path.child(field, 'rule'), cost);
      for (const problem of rule.problems) {
        out.push(invalid(path.child(field, problem.member), goValidationRule(rule.rule), problem.detail));
      }
      if (rule.messageProgram !== undefined) {
        if (rule.messageCost > STATIC_COST_LIMIT) {
          out.push(
            forbidden(
              path.child(field, 'messageExpression'),
              costErrorMessage('estimated messageExpression cost', rule.messageCost, STATIC_COST_LIMIT),
            ),
          );
        }
        observe(path.child(field, 'messageExpression'), rule.messageCost);
      }
      if (rule.program !== undefined && rule.usesOldSelf && node.uncorrelatableAt !== undefined) {
        out.push(
          invalid(
            path.child(field, 'rule'),
            rule.rule.rule,
            `oldSelf cannot be used on the uncorrelatable portion of the schema within ${path.child(at, node.uncorrelatableAt)}`,
          ),
        );
      } else if (rule.program !== undefined && !rule.usesOldSelf && rule.rule.optionalOldSelf !== undefined) {
        out.push(
          invalid(
            path.child(field, 'optionalOldSelf'),
            rule.rule.optionalOldSelf,
            'may not be set if oldSelf is not used in rule',
          ),
        );
      }
    });
  }
  if (total > STATIC_CRD_COST_LIMIT) {
    for (const e of expensive) {
      out.push(
        forbidden(
          e.field,
          'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema',
        ),
      );
    }
    out.push(
      forbidden(
        at,
        costErrorMessage(
          'x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema',
          total,
          STATIC_CRD_COST_LIMIT,
        ),
      ),
    );
  }
  return out;
}

/**
 * The `x-kubernetes-validations` causes of a CRD (one that passes `validateCrd`): schemas that are
 * the same in every version are checked once at `spec.validation.openAPIV3Schema`, as kube reports
 * them; otherwise each at `spec.versions[i].schema.openAPIV3Schema`.
 *
 * @example
 * const causes = crdRuleCauses(crd);
 * // [{ field: 'spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule',
 * //    reason: 'FieldValueInvalid', message: 'Invalid value: apiextensions.ValidationRule{…}: compilation failed: …' }]
 */
export function crdRuleCauses(crd: unknown): StatusCause[] {
  const spec = isObject(crd) ? own(crd, 'spec') : undefined;
  const versions = isObject(spec) && Array.isArray(spec.versions) ? spec.versions : [];
  const schemas = versions.map((v: unknown) => {
    const schema = isObject(v) ? own(v, 'schema') : undefined;
    const open = isObject(schema) ? own(schema, 'openAPIV3Schema') : undefined;
    return isObject(open) ? (open as StructuralSchema) : undefined;
  });
  const first = schemas[0];
  if (schemas.length > 0 && schemas.every((s) => jsonEqual(s, first))) {
    return first === undefined ? [] : schemaRuleCauses(first, 'spec.validation.openAPIV3Schema');
  }
  return schemas.flatMap((s, i) =>
    s === undefined ? [] : schemaRuleCauses(s, `spec.versions[${i}].schema.openAPIV3Schema`),
  );
}
