import type { ResourceType } from '../backend/index.ts';
import { InvalidFinalizerError } from './errors.ts';

/**
 * Names the finalizer of a kind (grafana app-sdk's `FinalizerSupplier`). Given to an
 * {@link OpinionatedWatcher} or {@link OpinionatedReconciler} instead of a fixed name.
 *
 * @example
 * const supplier: FinalizerSupplier = (type) => `${type.group}/${type.kind.toLowerCase()}-cleanup`;
 */
export type FinalizerSupplier = (type: ResourceType) => string;

/**
 * The default finalizer of a kind: `operator.<version>.<kind>.<group>`, with the kind's case kept
 * (`operator.v1.Widget.example.com`), as app-sdk's `DefaultFinalizerSupplier`. For the core group
 * (group '') it is `operator.<version>.<kind>`: app-sdk's pattern would end in '.', which
 * Kubernetes rejects.
 *
 * Long versions, kinds and groups can make it longer than the 63 characters Kubernetes allows;
 * the watcher then refuses it at construction ({@link InvalidFinalizerError}): give a shorter
 * `finalizer`, preferably domain-qualified (`example.com/widgets`).
 *
 * @example
 * defaultFinalizerSupplier(widgetType); // 'operator.v1.Widget.example.com'
 */
export function defaultFinalizerSupplier(type: ResourceType): string {
  return dotted('operator', type);
}

/**
 * The default in-progress finalizer of a kind: `wip.<version>.<kind>.<group>` (app-sdk v0.32's
 * `InProgressFinalizerSupplier`), `wip.<version>.<kind>` for the core group. The opinionated
 * watcher holds it while a new object's add handler has not yet succeeded.
 */
export function inProgressFinalizerSupplier(type: ResourceType): string {
  return dotted('wip', type);
}

function dotted(prefix: string, type: ResourceType): string {
  const parts = [prefix, type.version, type.kind];
  if (type.group !== '') parts.push(type.group);
  return parts.join('.');
}

const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Why `finalizer` is not a name the apiserver accepts in `metadata.finalizers`, or undefined when
 * it is one. The rule is Kubernetes' `IsQualifiedName` (what `ValidateFinalizerName` applies): an
 * optional prefix, a DNS subdomain of at most 253 characters, then '/'; then a name part of 1 to 63
 * characters of alphanumerics, '-', '_' and '.', starting and ending alphanumeric. The 63-character
 * limit applies to the name part, so `operator.v1.Widget.example.com` (no '/') counts whole while
 * `example.com/cleanup` counts `cleanup`. (app-sdk v0.43 checks only the length of the whole string.)
 *
 * @example
 * finalizerNameProblem('operator.v1.ConfigMap.'); // 'the name part must … end alphanumeric'
 */
export function finalizerNameProblem(finalizer: string): string | undefined {
  if (typeof finalizer !== 'string') return 'a finalizer must be a string';
  const slash = finalizer.indexOf('/');
  const name = slash < 0 ? finalizer : finalizer.slice(slash + 1);
  if (slash >= 0) {
    const prefix = finalizer.slice(0, slash);
    if (prefix === '') return 'the prefix before "/" must not be empty';
    if (prefix.length > 253) return 'the prefix before "/" must be at most 253 characters';
    if (!DNS_SUBDOMAIN.test(prefix)) {
      return 'the prefix before "/" must be a DNS subdomain: lower-case alphanumerics, "-" and ".", starting and ending alphanumeric';
    }
  }
  if (name === '') return 'the name part must not be empty';
  if (name.length > 63) return `the name part must be at most 63 characters (it has ${name.length})`;
  if (!NAME.test(name)) {
    return 'the name part must be alphanumerics, "-", "_" or ".", starting and ending alphanumeric';
  }
  return undefined;
}

/**
 * The finalizer a watcher or reconciler of `type` uses: `finalizer` itself, or what the supplier
 * returns, or `fallback(type)`. Throws an {@link InvalidFinalizerError} naming `option` when the
 * supplier throws or the name is not one Kubernetes accepts.
 */
export function resolveFinalizer(
  option: string,
  finalizer: string | FinalizerSupplier | undefined,
  type: ResourceType,
  fallback: FinalizerSupplier,
): string {
  let name: unknown;
  try {
    name = typeof finalizer === 'function' ? finalizer(type) : (finalizer ?? fallback(type));
  } catch (cause) {
    throw new InvalidFinalizerError(option, undefined, 'its supplier threw', { cause });
  }
  if (typeof name !== 'string') throw new InvalidFinalizerError(option, name, 'it is not a string');
  const problem = finalizerNameProblem(name);
  if (problem !== undefined) throw new InvalidFinalizerError(option, name, problem);
  return name;
}
