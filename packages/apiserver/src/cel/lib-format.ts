/**
 * Kubernetes' CEL format library (`k8s.io/apiserver/pkg/cel/library/format.go`):
 * `format.named("dns1123Label")` (an optional format), `format.dns1123Label()` and the other
 * named constructors, and `validate(s)` on a format: `optional.none()` when `s` is valid, else the
 * list of problems as apimachinery's validators word them. The validators are supplied by the
 * caller (the CRD module owns apimachinery's name rules).
 */
import { type Environment, Optional } from '@marcbachmann/cel-js';
import { chargeSize } from './cost.ts';
import type { CelEquatable } from './values.ts';

/** A validator: the problems with `value` (empty when valid). */
export type FormatValidator = (value: string) => readonly string[];

/** A named format value. */
export class NamedFormat implements CelEquatable {
  readonly name: string;
  readonly validator: FormatValidator;

  constructor(name: string, validator: FormatValidator) {
    this.name = name;
    this.validator = validator;
  }

  celEquals(other: unknown): boolean {
    return other instanceof NamedFormat && other.name === this.name;
  }
}

class FormatNamespace {}

/** Registers the format library with `formats` (by kube's names: `dns1123Label`, `labelValue`, …). */
export function registerFormatLibrary(
  env: Environment,
  formats: Readonly<Record<string, FormatValidator>>,
): void {
  const T = 'kubernetes.NamedFormat';
  env.registerType(T, NamedFormat);
  env.registerType('FormatNamespace', FormatNamespace);
  env.registerConstant('format', 'FormatNamespace', new FormatNamespace());
  env.registerFunction(`FormatNamespace.named(string): optional<${T}>`, (_ns: unknown, name: string) => {
    const validator = Object.hasOwn(formats, name) ? formats[name] : undefined;
    return validator === undefined ? Optional.none() : Optional.of(new NamedFormat(name, validator));
  });
  for (const [name, validator] of Object.entries(formats)) {
    env.registerFunction(`FormatNamespace.${name}(): ${T}`, () => new NamedFormat(name, validator));
  }
  env.registerFunction(`${T}.validate(string): optional<list<string>>`, (f: NamedFormat, value: string) => {
    chargeSize(value.length);
    const problems = f.validator(value);
    return problems.length === 0 ? Optional.none() : Optional.of([...problems]);
  });
}
