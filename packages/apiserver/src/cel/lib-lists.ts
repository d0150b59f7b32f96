/**
 * Kubernetes' CEL list library (`k8s.io/apiserver/pkg/cel/library/lists.go`): `isSorted`, `sum`,
 * `min`, `max`, `indexOf`, `lastIndexOf`, and cel-go's sets extension (`sets.contains`,
 * `sets.equivalent`, `sets.intersects`) that kube-apiserver enables for CRD rules.
 */
import { type Environment, EvaluationError } from '@marcbachmann/cel-js';
import { Duration } from '@marcbachmann/cel-js/evaluator';
import { charge } from './cost.ts';
import { celCompare, celEquals } from './values.ts';

/** The element types the comparison functions accept, as kube's library declares them. */
const COMPARABLE = [
  'int',
  'double',
  'bool',
  'string',
  'bytes',
  'google.protobuf.Duration',
  'google.protobuf.Timestamp',
];
const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

function sumInts(items: readonly unknown[]): bigint {
  let total = 0n;
  for (const item of items) {
    total += item as bigint;
    if (total > INT64_MAX || total < INT64_MIN) throw new EvaluationError('integer overflow');
  }
  return total;
}

function extreme(items: readonly unknown[], name: string, sign: number): unknown {
  charge(items.length);
  if (items.length === 0) throw new EvaluationError(`${name} called on empty list`);
  let best = items[0];
  for (const item of items.slice(1)) if (celCompare(item, best) * sign > 0) best = item;
  return best;
}

class SetsNamespace {}

/** Registers the list library and the sets extension on `env`. */
export function registerListLibrary(env: Environment): void {
  for (const type of COMPARABLE) {
    env.registerFunction(`list<${type}>.isSorted(): bool`, (items: readonly unknown[]) => {
      charge(items.length);
      for (let i = 1; i < items.length; i++) if (celCompare(items[i - 1], items[i]) > 0) return false;
      return true;
    });
    env.registerFunction(`list<${type}>.min(): ${type}`, (items: readonly unknown[]) =>
      extreme(items, 'min', -1),
    );
    env.registerFunction(`list<${type}>.max(): ${type}`, (items: readonly unknown[]) =>
      extreme(items, 'max', 1),
    );
  }
  env.registerFunction('list<int>.sum(): int', (items: readonly unknown[]) => {
    charge(items.length);
    return sumInts(items);
  });
  env.registerFunction('list<double>.sum(): double', (items: readonly number[]) => {
    charge(items.length);
    return items.reduce((a, b) => a + b, 0);
  });
  env.registerFunction(
    'list<google.protobuf.Duration>.sum(): google.protobuf.Duration',
    (items: readonly Duration[]) => {
      charge(items.length);
      return items.reduce((a, b) => a.addDuration(b), new Duration(0n, 0));
    },
  );
  env.registerFunction('list<A>.indexOf(A): int', (items: readonly unknown[], value: unknown) => {
    charge(items.length);
    return BigInt(items.findIndex((item) => celEquals(item, value)));
  });
  env.registerFunction('list<A>.lastIndexOf(A): int', (items: readonly unknown[], value: unknown) => {
    charge(items.length);
    for (let i = items.length - 1; i >= 0; i--) if (celEquals(items[i], value)) return BigInt(i);
    return -1n;
  });

  env
    .registerType('SetsNamespace', SetsNamespace)
    .registerConstant('sets', 'SetsNamespace', new SetsNamespace());
  const contains = (list: readonly unknown[], sub: readonly unknown[]): boolean =>
    sub.every((x) => list.some((y) => celEquals(x, y)));
  env.registerFunction(
    'SetsNamespace.contains(list<A>, list<A>): bool',
    (_ns: unknown, list: readonly unknown[], sub: readonly unknown[]) => {
      charge(list.length * sub.length);
      return contains(list, sub);
    },
  );
  env.registerFunction(
    'SetsNamespace.equivalent(list<A>, list<A>): bool',
    (_ns: unknown, a: readonly unknown[], b: readonly unknown[]) => {
      charge(a.length * b.length);
      return contains(a, b) && contains(b, a);
    },
  );
  env.registerFunction(
    'SetsNamespace.intersects(list<A>, list<A>): bool',
    (_ns: unknown, a: readonly unknown[], b: readonly unknown[]) => {
      charge(a.length * b.length);
      return a.some((x) => b.some((y) => celEquals(x, y)));
    },
  );
}
