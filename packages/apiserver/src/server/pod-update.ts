import type { StatusCause } from '@converge/runtime';
import type { JsonObject } from './api-resource.ts';
import { cause } from './field-causes.ts';
import { asObject, cloneJson } from './json-util.ts';

/** kube-apiserver's `updatablePodSpecFields`, joined as its Forbidden message prints them. */
const UPDATABLE_FIELDS = [
  '`spec.containers[*].image`',
  '`spec.initContainers[*].image`',
  '`spec.activeDeadlineSeconds`',
  '`spec.tolerations` (only additions to existing tolerations)',
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
].join(',');

/** The leading text of the Forbidden cause at `spec` for any other change (a diff follows it). */
export const POD_UPDATE_FORBIDDEN = `pod updates may not change fields other than ${UPDATABLE_FIELDS}`;
const MAX_INT32 = 2 ** 31 - 1;

const list = (value: unknown): JsonObject[] =>
  Array.isArray(value) ? value.map((item) => asObject(item) ?? {}) : [];
const same = (a: unknown, b: unknown): boolean =>
  JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));

/**
 * JSON with object keys sorted and null, empty lists and empty objects dropped: apimachinery's
 * semantic equality treats nil and empty slices and maps alike.
 */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  const object = asObject(value);
  if (object === undefined) return value;
  const entries: [string, unknown][] = [];
  for (const key of Object.keys(object).sort()) {
    const v = canonical(object[key]);
    const empty = Array.isArray(v)
      ? v.length === 0
      : asObject(v) !== undefined && Object.keys(v as JsonObject).length === 0;
    if (v === undefined || v === null || empty) continue;
    entries.push([key, v]);
  }
  // fromEntries defines own properties: a `__proto__` key is compared as a field, not dropped.
  return Object.fromEntries(entries);
}

/** `ValidateContainerUpdates`: no containers added or removed; images present, unpadded. */
function containerCauses(
  next: unknown,
  previous: unknown,
  field: string,
): { causes: StatusCause[]; stop: boolean } {
  const containers = list(next);
  if (containers.length !== list(previous).length) {
    return { causes: [cause.forbidden(field, 'pod updates may not add or remove containers')], stop: true };
  }
  const causes: StatusCause[] = [];
  containers.forEach((c, i) => {
    const image = typeof c.image === 'string' ? c.image : '';
    if (image === '') causes.push(cause.required(`${field}[${i}].image`));
    if (image.trim() !== image) {
      causes.push(
        cause.invalid(`${field}[${i}].image`, image, 'must not have leading or trailing whitespace'),
      );
    }
  });
  return { causes, stop: false };
}

/** `validateOnlyAddedTolerations`: each old toleration is still there (its seconds may change). */
function tolerationCauses(next: unknown, previous: unknown): StatusCause[] {
  const added = list(next);
  for (const old of list(previous)) {
    const kept = added.some((t) => same({ ...old, tolerationSeconds: t.tolerationSeconds }, t));
    if (!kept)
      return [
        cause.forbidden(
          'spec.tolerations',
          'existing toleration can not be modified except its tolerationSeconds',
        ),
      ];
  }
  return [];
}

/** `validateOnlyDeletedSchedulingGates`: no gate that the old pod did not have. */
function schedulingGateCauses(next: unknown, previous: unknown): StatusCause[] {
  const old = new Set(list(previous).map((g) => g.name));
  return list(next).flatMap((gate, i) =>
    old.has(gate.name)
      ? []
      : [
          cause.forbidden(
            `spec.schedulingGates[${i}].name`,
            `only deletion is allowed, but found new scheduling gate '${String(gate.name)}'`,
          ),
        ],
  );
}

function activeDeadlineCauses(next: unknown, previous: unknown): StatusCause[] {
  const field = 'spec.activeDeadlineSeconds';
  if (typeof next === 'number') {
    if (next < 0 || next > MAX_INT32)
      return [cause.invalid(field, next, `must be between 0 and ${MAX_INT32}, inclusive`)];
    if (typeof previous === 'number' && previous < next) {
      return [cause.invalid(field, next, 'must be less than or equal to previous value')];
    }
    return [];
  }
  return typeof previous === 'number'
    ? [cause.invalid(field, null, 'must not update from a positive integer to nil value')]
    : [];
}

/** A short account of what differs, one `-`/`+` pair per changed top-level spec field. */
function specDiff(previous: JsonObject, munged: JsonObject): string {
  const keys = [...new Set([...Object.keys(previous), ...Object.keys(munged)])].sort();
  const lines = ['  PodSpec{'];
  for (const key of keys) {
    if (same(previous[key], munged[key])) continue;
    if (previous[key] !== undefined) lines.push(`- \t${key}: ${JSON.stringify(canonical(previous[key]))},`);
    if (munged[key] !== undefined) lines.push(`+ \t${key}: ${JSON.stringify(canonical(munged[key]))},`);
  }
  lines.push('  }');
  return lines.join('\n');
}

/**
 * kube-apiserver's `ValidatePodUpdate` for the spec: containers may not be added or removed;
 * only container images, `activeDeadlineSeconds` (set, or lowered), added tolerations, removed
 * scheduling gates and a negative grace period becoming 1 may change. Anything else is one
 * Forbidden cause at `spec` whose message lists the updatable fields and then a diff (Converge's
 * diff is its own, not go-cmp's).
 */
export function podSpecUpdateCauses(spec: JsonObject, previous: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const key of ['containers', 'initContainers'] as const) {
    const found = containerCauses(spec[key], previous[key], `spec.${key}`);
    causes.push(...found.causes);
    if (found.stop) return causes;
  }
  const deadline = activeDeadlineCauses(spec.activeDeadlineSeconds, previous.activeDeadlineSeconds);
  causes.push(...deadline);
  if (deadline.length > 0 && typeof spec.activeDeadlineSeconds === 'number') return causes;
  causes.push(...tolerationCauses(spec.tolerations, previous.tolerations));
  causes.push(...schedulingGateCauses(spec.schedulingGates, previous.schedulingGates));
  if (same(spec, previous)) return causes;

  const munged = cloneJson(spec);
  for (const key of ['containers', 'initContainers'] as const) {
    const old = list(previous[key]);
    if (Array.isArray(munged[key])) {
      munged[key] = list(munged[key]).map((c, i) => ({ ...c, image: old[i]?.image }));
    }
  }
  munged.activeDeadlineSeconds = previous.activeDeadlineSeconds;
  munged.schedulingGates = previous.schedulingGates;
  munged.tolerations = previous.tolerations;
  const oldGrace = previous.terminationGracePeriodSeconds;
  if (typeof oldGrace === 'number' && oldGrace < 0 && munged.terminationGracePeriodSeconds === 1) {
    munged.terminationGracePeriodSeconds = oldGrace;
  }
  if (!same(munged, previous)) {
    causes.push(cause.forbidden('spec', `${POD_UPDATE_FORBIDDEN}\n${specDiff(previous, munged)}`));
  }
  return causes;
}
