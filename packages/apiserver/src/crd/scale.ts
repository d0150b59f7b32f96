/**
 * The `scale` subresource of custom resources: read and write the replicas a CRD's
 * `subresources.scale` points at, build the `autoscaling/v1` Scale kubectl expects, and the scale
 * checks kube-apiserver adds to validation.
 */
import type { StatusCause } from '@converge/runtime';
import { CrdScaleError } from './errors.ts';
import { invalid } from './field-errors.ts';
import { goValue } from './go-format.ts';
import { assertJson, defineKey, isInt64, isObject, type JsonObject, jsonClone, own } from './json.ts';
import type { ScaleSubresource } from './types.ts';

function fieldsOf(jsonPath: string): string[] {
  return (jsonPath.startsWith('.') ? jsonPath.slice(1) : jsonPath).split('.');
}

function goTypeOf(value: unknown): string {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return isInt64(value) ? 'int64' : 'float64';
  if (Array.isArray(value)) return '[]interface {}';
  if (isObject(value)) return 'map[string]interface {}';
  return '<nil>';
}

/** unstructured's `NestedFieldNoCopy`: the value at `fields`, whether found, or kube's accessor error. */
function nested(object: unknown, fields: readonly string[]): { found: boolean; value: unknown } {
  let current: unknown = object;
  for (let i = 0; i < fields.length; i++) {
    if (!isObject(current)) {
      const at = `.${fields.slice(0, i).join('.')}`;
      throw new CrdScaleError(
        `${at} accessor error: ${goValue(current)} is of the type ${goTypeOf(current)}, expected map[string]interface{}`,
      );
    }
    const key = fields[i] ?? '';
    if (!Object.hasOwn(current, key)) return { found: false, value: undefined };
    current = current[key];
  }
  return { found: true, value: current };
}

function nestedInt(object: unknown, jsonPath: string): { found: boolean; value: number } {
  const fields = fieldsOf(jsonPath);
  const { found, value } = nested(object, fields);
  if (!found) return { found: false, value: 0 };
  if (typeof value !== 'number' || !isInt64(value)) {
    throw new CrdScaleError(
      `.${fields.join('.')} accessor error: ${goValue(value)} is of the type ${goTypeOf(value)}, expected int64`,
    );
  }
  return { found: true, value };
}

function nestedString(object: unknown, jsonPath: string): string {
  const fields = fieldsOf(jsonPath);
  const { found, value } = nested(object, fields);
  if (!found) return '';
  if (typeof value !== 'string') {
    throw new CrdScaleError(
      `.${fields.join('.')} accessor error: ${goValue(value)} is of the type ${goTypeOf(value)}, expected string`,
    );
  }
  return value;
}

/** Go's `int32(x)` of an int64: wraps around. */
function int32(value: number): number {
  return Number(BigInt.asIntN(32, BigInt(value)));
}

/**
 * The replicas of a custom resource for its scale subresource (0 when a path is absent) and the
 * label selector when `labelSelectorPath` is set. `specReplicasFound` is false when the spec path
 * is absent (kube then refuses a scale update that does not set replicas). Throws
 * {@link CrdScaleError} when a path crosses a non-object or holds a non-integer (kube answers 500).
 *
 * @example
 * scaleOf({ spec: { replicas: 3 }, status: { replicas: 2, selector: 'app=web' } }, scale);
 * // { replicas: 3, statusReplicas: 2, selector: 'app=web', specReplicasFound: true }
 */
export function scaleOf(
  object: unknown,
  scale: ScaleSubresource,
): {
  readonly replicas: number;
  readonly statusReplicas: number;
  readonly selector?: string;
  readonly specReplicasFound: boolean;
} {
  assertJson(object);
  const spec = nestedInt(object, scale.specReplicasPath);
  const status = nestedInt(object, scale.statusReplicasPath);
  const selector =
    scale.labelSelectorPath !== undefined && scale.labelSelectorPath !== ''
      ? nestedString(object, scale.labelSelectorPath)
      : undefined;
  return {
    replicas: int32(spec.value),
    statusReplicas: int32(status.value),
    ...(selector === undefined ? {} : { selector }),
    specReplicasFound: spec.found,
  };
}

/**
 * The `autoscaling/v1` Scale kube-apiserver returns for `GET …/scale` (empty fields omitted as Go's
 * `omitempty` does: `spec.replicas` 0 and an empty selector are left out).
 */
export function scaleObject(object: unknown, scale: ScaleSubresource): JsonObject {
  const s = scaleOf(object, scale);
  const meta = isObject(object) && isObject(object.metadata) ? object.metadata : {};
  const metadata: JsonObject = {};
  for (const key of ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp']) {
    const value = own(meta, key);
    if (typeof value === 'string' && value !== '') metadata[key] = value;
  }
  if (metadata.creationTimestamp === undefined) metadata.creationTimestamp = null;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata,
    spec: s.replicas === 0 ? {} : { replicas: s.replicas },
    status: { replicas: s.statusReplicas, ...(s.selector ? { selector: s.selector } : {}) },
  };
}

/**
 * A copy of `object` with the spec replicas set (intermediate objects created), as a scale update
 * writes them. Throws {@link CrdScaleError} when the path crosses a non-object.
 *
 * @example
 * setScale(website, scale, 5); // { …, spec: { …, replicas: 5 } }
 */
export function setScale(object: unknown, scale: ScaleSubresource, replicas: number): unknown {
  assertJson(object);
  if (!Number.isInteger(replicas)) throw new CrdScaleError(`replicas must be an integer, got ${replicas}`);
  const copy = jsonClone(object);
  const fields = fieldsOf(scale.specReplicasPath);
  let current: unknown = copy;
  for (let i = 0; i < fields.length - 1; i++) {
    if (!isObject(current)) break;
    const key = fields[i] ?? '';
    if (!Object.hasOwn(current, key) || current[key] === null) defineKey(current, key, {});
    const next: unknown = current[key];
    if (!isObject(next)) {
      throw new CrdScaleError(
        `value cannot be set because .${fields.slice(0, i + 1).join('.')} is not a map[string]interface{}`,
      );
    }
    current = next;
  }
  if (!isObject(current))
    throw new CrdScaleError('value cannot be set because the object is not a map[string]interface{}');
  defineKey(current, fields[fields.length - 1] ?? '', replicas);
  return copy;
}

/**
 * The scale checks kube-apiserver adds to custom resource validation when the CRD declares a scale
 * subresource: replicas at both paths must be integers in [0, 2147483647] and the selector a string
 * (`statusOnly` for updates of `/status`, which skip the spec path). Field paths are the JSONPaths
 * themselves (`.spec.replicas: Invalid value: -1: should be a non-negative integer`).
 */
export function validateScale(object: unknown, scale: ScaleSubresource, statusOnly = false): StatusCause[] {
  assertJson(object);
  const out: StatusCause[] = [];
  const check = (jsonPath: string): void => {
    try {
      const { value } = nestedInt(object, jsonPath);
      if (value < 0) out.push(invalid(jsonPath, value, 'should be a non-negative integer'));
      else if (value > 2147483647)
        out.push(invalid(jsonPath, value, 'should be less than or equal to 2147483647'));
    } catch (error) {
      out.push(invalid(jsonPath, 0, (error as Error).message));
    }
  };
  if (!statusOnly) check(scale.specReplicasPath);
  check(scale.statusReplicasPath);
  if (scale.labelSelectorPath !== undefined && scale.labelSelectorPath !== '') {
    try {
      nestedString(object, scale.labelSelectorPath);
    } catch (error) {
      out.push(invalid(scale.labelSelectorPath, '', (error as Error).message));
    }
  }
  return out;
}
