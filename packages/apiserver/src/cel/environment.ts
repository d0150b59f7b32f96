/**
 * The CEL environment kube-apiserver 1.32 gives validation rules: optional types, homogeneous
 * aggregate literals, the strings extension, the Kubernetes list, regex, quantity, URL and format
 * libraries, `sets`, and RFC 3339 conversion of timestamps and durations to strings. One base
 * environment is built per set of formats and cloned for each set of declarations.
 */
import { Environment } from '@marcbachmann/cel-js';
import { Duration } from '@marcbachmann/cel-js/evaluator';
import { type FormatValidator, registerFormatLibrary } from './lib-format.ts';
import { registerListLibrary } from './lib-lists.ts';
import { registerQuantityLibrary } from './lib-quantity.ts';
import { registerRegexLibrary } from './lib-regex.ts';
import { registerStringLibrary, stringOf } from './lib-strings.ts';
import { registerUrlLibrary } from './lib-url.ts';

/** Options of {@link celEnvironment}. */
export interface CelEnvironmentOptions {
  /**
   * The formats `format.named(…)` knows, by kube's names (`dns1123Label`, `labelValue`, …). Default:
   * none (`format.named` answers `optional.none()`).
   */
  readonly formats?: Readonly<Record<string, FormatValidator>>;
}

const bases = new WeakMap<object, Environment>();
const NO_FORMATS: Readonly<Record<string, FormatValidator>> = {};

function build(formats: Readonly<Record<string, FormatValidator>>): Environment {
  const env = new Environment({
    enableOptionalTypes: true,
    homogeneousAggregateLiterals: true,
    limits: { maxAstNodes: 10_000, maxDepth: 250, maxListElements: 10_000, maxMapEntries: 10_000 },
  });
  registerStringLibrary(env);
  registerListLibrary(env);
  registerRegexLibrary(env);
  registerQuantityLibrary(env);
  registerUrlLibrary(env);
  registerFormatLibrary(env, formats);
  env.registerFunction('string(google.protobuf.Timestamp): string', (t: Date) => stringOf(t));
  env.registerFunction('string(google.protobuf.Duration): string', (d: Duration) => stringOf(d));
  return env;
}

/**
 * A fresh environment with Kubernetes' libraries, ready for declarations (`registerType`,
 * `registerVariable`). The libraries are registered once per `formats` object and shared.
 *
 * @example
 * const env = celEnvironment().registerVariable('self', 'int');
 * env.evaluate('self <= 10', { self: 3n }); // true
 */
export function celEnvironment(options: CelEnvironmentOptions = {}): Environment {
  const formats = options.formats ?? NO_FORMATS;
  let base = bases.get(formats);
  if (base === undefined) {
    base = build(formats);
    bases.set(formats, base);
  }
  return base.clone();
}

export { Duration };
