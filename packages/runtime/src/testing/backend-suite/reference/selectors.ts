import { BadRequestError } from '../../../backend/index.ts';
import type { KubeObject } from '../../../object/index.ts';
import { parseShardSelector } from '../../../selector/index.ts';

/** Tests an object against a compiled selector. */
export type ObjectMatcher = (object: KubeObject) => boolean;

type Labels = Readonly<Record<string, string>>;

const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const INTEGER = /^-?[0-9]+$/;

/** Whether `key` is a qualified name (`[prefix/]name`), as label keys and finalizers must be. */
export function isQualifiedName(key: string): boolean {
  const slash = key.indexOf('/');
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (name.length === 0 || name.length > 63 || !NAME.test(name)) return false;
  if (slash < 0) return true;
  const prefix = key.slice(0, slash);
  return prefix.length > 0 && prefix.length <= 253 && DNS_SUBDOMAIN.test(prefix);
}

/** Whether `value` is a valid label value (empty allowed). */
export function isLabelValue(value: string): boolean {
  return value === '' || (value.length <= 63 && NAME.test(value));
}

type Token =
  | { readonly kind: 'word'; readonly text: string }
  | { readonly kind: 'op'; readonly text: string };

/** Splits a selector into words and the operators `! = == != ( ) , < >`. */
function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text.charAt(i);
    if (c === ' ' || c === '\t') {
      i++;
    } else if ((c === '=' || c === '!') && text.charAt(i + 1) === '=') {
      tokens.push({ kind: 'op', text: `${c}=` });
      i += 2;
    } else if ('!=(),<>'.includes(c)) {
      tokens.push({ kind: 'op', text: c });
      i++;
    } else {
      let j = i;
      while (j < text.length && !' \t!=(),<>'.includes(text.charAt(j))) j++;
      tokens.push({ kind: 'word', text: text.slice(i, j) });
      i = j;
    }
  }
  return tokens;
}

function bad(selector: string, problem: string): BadRequestError {
  return new BadRequestError(
    `unable to parse requirement in label selector ${JSON.stringify(selector)}: ${problem}`,
  );
}

/**
 * Compiles a label selector in Kubernetes' string syntax: `k=v`, `k==v`, `k!=v`, `k in (a,b)`,
 * `k notin (a)`, `k`, `!k`, `k>1`, `k<1`, joined by commas (AND). Throws a BadRequestError.
 */
export function parseLabelSelector(selector: string): ObjectMatcher {
  const tokens = tokenize(selector);
  const tests: ((labels: Labels) => boolean)[] = [];
  let i = 0;
  const peek = (): Token | undefined => tokens[i];
  const word = (what: string): string => {
    const token = tokens[i++];
    if (token?.kind !== 'word') throw bad(selector, `expected ${what}`);
    return token.text;
  };
  const key = (): string => {
    const k = word('a label key');
    if (!isQualifiedName(k)) throw bad(selector, `invalid label key ${JSON.stringify(k)}`);
    return k;
  };
  const value = (): string => {
    const next = peek();
    if (next === undefined || (next.kind === 'op' && (next.text === ',' || next.text === ')'))) return '';
    const v = word('a label value');
    if (!isLabelValue(v)) throw bad(selector, `invalid label value ${JSON.stringify(v)}`);
    return v;
  };
  while (i < tokens.length) {
    const first = peek();
    if (first?.kind === 'op' && first.text === '!') {
      i++;
      const k = key();
      tests.push((labels) => !Object.hasOwn(labels, k));
    } else {
      const k = key();
      const op = peek();
      if (op === undefined || (op.kind === 'op' && op.text === ',')) {
        tests.push((labels) => Object.hasOwn(labels, k));
      } else if (op.kind === 'op' && (op.text === '=' || op.text === '==' || op.text === '!=')) {
        i++;
        const v = value();
        const wanted = op.text !== '!=';
        tests.push((labels) => (Object.hasOwn(labels, k) && labels[k] === v) === wanted);
      } else if (op.kind === 'op' && (op.text === '<' || op.text === '>')) {
        i++;
        const bound = word('an integer');
        if (!INTEGER.test(bound)) throw bad(selector, `${JSON.stringify(bound)} is not an integer`);
        const limit = Number(bound);
        const greater = op.text === '>';
        tests.push((labels) => {
          const raw = labels[k];
          if (raw === undefined || !INTEGER.test(raw)) return false;
          return greater ? Number(raw) > limit : Number(raw) < limit;
        });
      } else if (op.kind === 'word' && (op.text === 'in' || op.text === 'notin')) {
        i++;
        const open = tokens[i++];
        if (open?.kind !== 'op' || open.text !== '(') throw bad(selector, 'expected (');
        const values = new Set<string>();
        for (;;) {
          values.add(value());
          const sep = tokens[i++];
          if (sep?.kind === 'op' && sep.text === ')') break;
          if (sep?.kind !== 'op' || sep.text !== ',') throw bad(selector, 'expected , or )');
        }
        const wanted = op.text === 'in';
        tests.push((labels) => (Object.hasOwn(labels, k) && values.has(labels[k] as string)) === wanted);
      } else {
        throw bad(selector, `unexpected ${JSON.stringify(op.text)} after ${JSON.stringify(k)}`);
      }
    }
    const sep = tokens[i++];
    if (sep === undefined) break;
    if (sep.kind !== 'op' || sep.text !== ',' || i >= tokens.length)
      throw bad(selector, 'expected , between requirements');
  }
  return (object) => {
    const labels = object.metadata.labels ?? {};
    return tests.every((test) => test(labels));
  };
}

const FIELDS: Readonly<Record<string, (object: KubeObject) => string>> = {
  'metadata.name': (o) => o.metadata.name ?? '',
  'metadata.namespace': (o) => o.metadata.namespace ?? '',
};

/**
 * Compiles a field selector: `metadata.name` and `metadata.namespace` with `=`, `==` or `!=`,
 * joined by commas. Throws a BadRequestError for anything else.
 */
export function parseFieldSelector(selector: string): ObjectMatcher {
  const tests: ObjectMatcher[] = [];
  for (const term of selector.split(',')) {
    if (term.trim() === '' && selector.trim() === '') continue;
    const match = /^\s*([^=!\s]+)\s*(==|!=|=)\s*([^=!]*?)\s*$/.exec(term);
    if (match === null) throw new BadRequestError(`invalid field selector term ${JSON.stringify(term)}`);
    const [, field = '', op = '', value = ''] = match;
    const read = FIELDS[field];
    if (read === undefined) {
      throw new BadRequestError(`field label not supported: ${field}`, { details: { causes: [] } });
    }
    const wanted = op !== '!=';
    tests.push((object) => (read(object) === value) === wanted);
  }
  return (object) => tests.every((test) => test(object));
}

/**
 * The namespace, label, field and shard selectors of a list or watch, as one matcher. The shard
 * selector (KEP-5866) uses the runtime's parser: its grammar and hash are tested on their own.
 */
export function compileSelection(options: {
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly shardSelector?: string;
}): ObjectMatcher {
  const namespace = options.namespace ?? '';
  const labels = options.labelSelector === undefined ? undefined : parseLabelSelector(options.labelSelector);
  const fields = options.fieldSelector === undefined ? undefined : parseFieldSelector(options.fieldSelector);
  const shard =
    options.shardSelector === undefined || options.shardSelector === ''
      ? undefined
      : parseShardSelector(options.shardSelector);
  return (object) =>
    (namespace === '' || object.metadata.namespace === namespace) &&
    (labels === undefined || labels(object)) &&
    (fields === undefined || fields(object)) &&
    (shard === undefined || shard.matches(object));
}
