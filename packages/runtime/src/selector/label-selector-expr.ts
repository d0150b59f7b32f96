/**
 * A parsed label selector (Kubernetes string syntax: `=`, `==`, `!=`, `in (a,b)`, `notin (a,b)`,
 * `key`, `!key`, comma = AND; also `key>n`, `key<n` as kube-apiserver accepts them). Made by
 * `parseLabelSelector` or `labelSelectorFromObject`.
 *
 * @example
 * const selector = parseLabelSelector('app=web, tier notin (canary)');
 * selector.matches({ app: 'web' }); // true
 * selector.toString(); // 'app=web,tier notin (canary)'
 */
export interface LabelSelectorExpr {
  /** True for the empty selector (`''`), which matches every label set. */
  readonly empty: boolean;
  /** Whether a label set satisfies every requirement. `undefined` is the empty label set. */
  matches(labels: Readonly<Record<string, string>> | undefined): boolean;
  /** The canonical string form: requirements sorted by key, `==` written `=`, values sorted. */
  toString(): string;
}
