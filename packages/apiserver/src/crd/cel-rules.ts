/**
 * Compiling the `x-kubernetes-validations` of a root schema (apiextensions' `cel.Compile` per node):
 * every rule is type-checked with `self` (and `oldSelf`) bound to the node's CEL type, its
 * `messageExpression` compiled as a string expression, its `fieldPath` resolved against the
 * schema, its worst-case cost estimated. The result parallels the schema, keeping only the
 * branches that hold rules. Compiled once per compiled schema.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { type CelProgram, compileCel, estimateCost, type SizeInfo } from '../cel/index.ts';
import { type CelNodeType, celSchemaTypes, MAX_REQUEST_SIZE } from './cel-types.ts';
import { path } from './field-errors.ts';
import type { SchemaNode } from './schema.ts';
import type { ValidationRule } from './types.ts';

/** A problem of one rule found while compiling (reported when the CRD is written). */
export interface RuleProblem {
  /** The member of the rule it concerns. */
  readonly member: 'rule' | 'messageExpression';
  readonly detail: string;
}

/** One compiled rule. */
export interface CompiledRule {
  readonly index: number;
  readonly rule: ValidationRule;
  /** Undefined when the rule did not compile (see `problems`) or is empty. */
  readonly program: CelProgram | undefined;
  readonly messageProgram: CelProgram | undefined;
  readonly problems: readonly RuleProblem[];
  /** The rule references `oldSelf`: a transition rule. */
  readonly usesOldSelf: boolean;
  /** Worst-case cost of one evaluation of the rule and of its messageExpression. */
  readonly cost: number;
  readonly messageCost: number;
  /** `fieldPath` in field-path notation (`spec.replicas`, `labels[a.b]`); '' when absent or invalid. */
  readonly fieldPath: string;
  readonly fieldPathValid: boolean;
}

/** A schema node with rules, or with descendants that have rules. */
export interface RuleNode {
  readonly schema: SchemaNode;
  readonly type: CelNodeType;
  readonly rules: readonly CompiledRule[];
  readonly properties: ReadonlyMap<string, RuleNode>;
  readonly items: RuleNode | undefined;
  readonly additionalProperties: RuleNode | undefined;
  /** Where the node sits in the schema (`properties[spec].properties[ports].items`). */
  readonly schemaPath: string;
  /** How often the node can occur in an object: the product of the bounds above it, or undefined. */
  readonly cardinality: number | undefined;
  /** The schema path of the list that makes `oldSelf` unusable here (a non-map list above). */
  readonly uncorrelatableAt: string | undefined;
}

/**
 * kube's `ValidFieldPath`: `.a.b` and `['a.b']` steps through properties and map keys, in
 * field-path notation; undefined when the path does not name a field of the schema.
 */
export function resolveFieldPath(fieldPath: string, schema: SchemaNode): string | undefined {
  let node: SchemaNode | undefined = schema;
  let out = '';
  let rest = fieldPath;
  while (rest !== '') {
    let name: string;
    const dot = /^\.([^.[\]]+)/.exec(rest);
    const quoted = /^\['((?:[^'\\]|\\.)*)'\]/.exec(rest);
    if (dot !== null) {
      name = dot[1] ?? '';
      rest = rest.slice(dot[0].length);
    } else if (quoted !== null) {
      const unescaped = unescapeSingleQuoted(quoted[1] ?? '');
      if (unescaped === undefined) return undefined;
      name = unescaped;
      rest = rest.slice(quoted[0].length);
    } else {
      return undefined;
    }
    if (node?.properties !== undefined) {
      node = node.properties.get(name);
      if (node === undefined) return undefined;
      out = path.child(out, name);
    } else if (typeof node?.additionalProperties === 'object') {
      node = node.additionalProperties;
      out = path.key(out, name);
    } else {
      return undefined;
    }
  }
  return out;
}

function unescapeSingleQuoted(text: string): string | undefined {
  const map: Record<string, string> = {
    a: '\x07',
    b: '\b',
    f: '\f',
    n: '\n',
    r: '\r',
    t: '\t',
    v: '\v',
    "'": "'",
    '\\': '\\',
  };
  let ok = true;
  const out = text.replace(/\\(.)/g, (_m, c: string) => {
    const v = map[c];
    if (v === undefined) ok = false;
    return v ?? '';
  });
  return ok ? out : undefined;
}

/** apiextensions' `maxCardinality`: how many values of `minSize` bytes fit in one request. */
export function unboundedCardinality(minSize: number): number {
  return Math.floor(MAX_REQUEST_SIZE / (minSize + 1));
}

function compileRule(
  rule: ValidationRule,
  index: number,
  envs: { readonly plain: () => Environment; readonly optional: () => Environment },
  size: SizeInfo,
  schema: SchemaNode,
): CompiledRule {
  const problems: RuleProblem[] = [];
  const source = typeof rule.rule === 'string' ? rule.rule : '';
  const fieldPath = typeof rule.fieldPath === 'string' && rule.fieldPath.trim() !== '' ? rule.fieldPath : '';
  const resolved = fieldPath === '' ? '' : resolveFieldPath(fieldPath, schema);
  const base = { index, rule, problems, fieldPath: resolved ?? '', fieldPathValid: resolved !== undefined };
  const variables = new Map([
    ['self', size],
    ['oldSelf', size],
  ]);
  if (source.trim() === '') {
    return {
      ...base,
      program: undefined,
      messageProgram: undefined,
      usesOldSelf: false,
      cost: 0,
      messageCost: 0,
    };
  }
  const compiled = compileCel(rule.optionalOldSelf === true ? envs.optional() : envs.plain(), source, 'bool');
  if (!('evaluate' in compiled)) {
    const detail =
      compiled.kind === 'compile'
        ? `compilation failed: ${compiled.message}`
        : compiled.kind === 'program'
          ? `program instantiation failed: ${compiled.message}`
          : compiled.message;
    problems.push({ member: 'rule', detail });
    return {
      ...base,
      program: undefined,
      messageProgram: undefined,
      usesOldSelf: false,
      cost: 0,
      messageCost: 0,
    };
  }
  const cost = estimateCost(compiled.ast, variables);
  let messageProgram: CelProgram | undefined;
  let messageCost = 0;
  const expression = typeof rule.messageExpression === 'string' ? rule.messageExpression : '';
  if (expression.trim() !== '') {
    const message = compileCel(envs.plain(), expression, 'string');
    if ('evaluate' in message) {
      messageProgram = message;
      messageCost = estimateCost(message.ast, variables);
    } else if (message.kind === 'type') {
      problems.push({ member: 'messageExpression', detail: 'messageExpression must evaluate to a string' });
    } else {
      problems.push({
        member: 'messageExpression',
        detail: `messageExpression compilation failed: ${message.message}`,
      });
    }
  }
  return {
    ...base,
    program: compiled,
    messageProgram,
    usesOldSelf: compiled.variables.has('oldSelf'),
    cost,
    messageCost,
  };
}

interface Walk {
  readonly schemaPath: string;
  readonly cardinality: number | undefined;
  readonly uncorrelatableAt: string | undefined;
}

function rulesOf(schema: SchemaNode): readonly ValidationRule[] {
  const rules = schema.raw['x-kubernetes-validations'];
  return Array.isArray(rules) ? rules : [];
}

function build(schema: SchemaNode, resourceRoot: boolean, at: Walk, root: SchemaNode): RuleNode | undefined {
  const types = celSchemaTypes(root);
  const type = types.typeOf(schema, resourceRoot);
  if (type === undefined) return undefined;
  const rules = rulesOf(schema);
  let plain: Environment | undefined;
  let optional: Environment | undefined;
  const envs = {
    plain: () => {
      plain ??= types.env.clone().registerVariable('self', type.type).registerVariable('oldSelf', type.type);
      return plain;
    },
    optional: () => {
      optional ??= types.env
        .clone()
        .registerVariable('self', type.type)
        .registerVariable('oldSelf', `optional<${type.type}>`);
      return optional;
    },
  };
  const compiled = rules.map((rule, i) => compileRule(rule, i, envs, type.size, schema));
  const bound = (max: number | undefined): number | undefined =>
    at.cardinality === undefined || max === undefined ? undefined : at.cardinality * Math.max(0, max);
  const properties = new Map<string, RuleNode>();
  for (const [name, child] of schema.properties ?? []) {
    const node = build(
      child,
      child.embeddedResource,
      { ...at, schemaPath: path.key(path.child(at.schemaPath, 'properties'), name) },
      root,
    );
    if (node !== undefined) properties.set(name, node);
  }
  const items =
    schema.items === undefined
      ? undefined
      : build(
          schema.items,
          schema.items.embeddedResource,
          {
            schemaPath: path.child(at.schemaPath, 'items'),
            cardinality: bound(schema.maxItems),
            uncorrelatableAt: at.uncorrelatableAt ?? (schema.listType === 'map' ? undefined : at.schemaPath),
          },
          root,
        );
  const additional =
    typeof schema.additionalProperties === 'object'
      ? build(
          schema.additionalProperties,
          schema.additionalProperties.embeddedResource,
          {
            ...at,
            schemaPath: path.child(at.schemaPath, 'additionalProperties'),
            cardinality: bound(schema.maxProperties),
          },
          root,
        )
      : undefined;
  if (compiled.length === 0 && properties.size === 0 && items === undefined && additional === undefined) {
    return undefined;
  }
  return {
    schema,
    type,
    rules: compiled,
    properties,
    items,
    additionalProperties: additional,
    schemaPath: at.schemaPath,
    cardinality: at.cardinality,
    uncorrelatableAt: at.uncorrelatableAt,
  };
}

const cache = new WeakMap<SchemaNode, { readonly node: RuleNode | undefined }>();

/**
 * The compiled rules of a root schema (undefined when it has none). Compilation problems are kept
 * on the rules; {@link ruleCauses} reports them as kube-apiserver does on CRD writes.
 */
export function compileRules(root: SchemaNode): RuleNode | undefined {
  let hit = cache.get(root);
  if (hit === undefined) {
    hit = { node: build(root, true, { schemaPath: '', cardinality: 1, uncorrelatableAt: undefined }, root) };
    cache.set(root, hit);
  }
  return hit.node;
}

/** Every node of a rule tree, depth first. */
export function ruleNodes(node: RuleNode | undefined): RuleNode[] {
  if (node === undefined) return [];
  return [
    node,
    ...[...node.properties.values()].flatMap(ruleNodes),
    ...ruleNodes(node.items),
    ...ruleNodes(node.additionalProperties),
  ];
}

/** The worst-case cost of a rule over all the places it can run (kube's `getExpressionCost`). */
export function ruleCost(node: RuleNode, rule: CompiledRule): number {
  const cardinality = node.cardinality ?? unboundedCardinality(node.type.minSize);
  return rule.cost === 0 ? 0 : Math.min(rule.cost * cardinality, 2 ** 64);
}
