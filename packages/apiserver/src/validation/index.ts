/**
 * Validation of CRDs and custom resources without a server: what the embedded API server (and
 * kube-apiserver 1.32) answers when the object is written, in a plain unit test.
 *
 * - {@link validateCustomResource}: prune unknown fields → apply `default`s → schema validation →
 *   `x-kubernetes-validations` CEL rules (with `oldSelf` and ratcheting for updates), with kube's
 *   causes, warnings and the 422 message.
 * - {@link compileCrdValidations}: the CRD's own validation, then its rules compiled and their
 *   worst-case cost estimated, as on `kubectl apply` of the CRD.
 *
 * @example
 * import { compileCrdValidations, validateCustomResource } from '@converge/apiserver';
 *
 * expect(compileCrdValidations(websiteCrd)).toEqual([]);
 * const result = validateCustomResource(websiteCrd, { apiVersion: 'example.com/v1', kind: 'Website',
 *   metadata: { name: 'w1' }, spec: { replicas: 20 } });
 * expect(result.message).toBe('Website.example.com "w1" is invalid: spec: Invalid value: "object": replicas must be at most 10');
 *
 * @module
 */
import type { CustomResourceDefinition, StatusCause } from '@converge/runtime';
import {
  applyDefaults,
  type CustomResourceDefinition as CrdShape,
  CrdVersionNotFoundError,
  crdInfo,
  crdRuleCauses,
  invalidError,
  pruneUnknownFields,
  unknownFieldWarnings,
  validateCustomResource as validateAgainstSchema,
  validateCrd,
  validateCustomResourceRules,
} from '../crd/index.ts';

export { CrdErrorCodes, CrdInvalidError, CrdVersionNotFoundError } from '../crd/index.ts';

/** Options of {@link validateCustomResource}. */
export interface CustomResourceValidationOptions {
  /**
   * The version whose schema applies. Default: the version of the object's `apiVersion` when the
   * CRD declares it, else the storage version.
   */
  readonly version?: string;
  /**
   * The object an update replaces: transition rules (those using `oldSelf`) run against it, and a
   * failure on a value that did not change is only a warning (ratcheting). Omit for a create.
   */
  readonly oldObject?: unknown;
}

/** What the server would answer for the write. */
export interface CustomResourceValidation {
  /** The 422 causes (empty when the object is accepted). */
  readonly causes: readonly StatusCause[];
  /** `Warning:` headers: unknown (pruned) fields and ratcheted rule failures. */
  readonly warnings: readonly string[];
  /** The object as it would be stored: unknown fields pruned, defaults applied. */
  readonly object: unknown;
  /** The 422's message (`Website.example.com "w1" is invalid: …`); undefined when accepted. */
  readonly message: string | undefined;
}

/** Accepts the runtime's typed CRD and CRDs read from YAML. */
export type CrdLike = CustomResourceDefinition | CrdShape;

function versionOf(crd: CrdLike, object: unknown, asked: string | undefined) {
  const info = crdInfo(crd as CrdShape);
  const apiVersion =
    typeof object === 'object' && object !== null
      ? (object as { apiVersion?: unknown }).apiVersion
      : undefined;
  const fromObject = typeof apiVersion === 'string' ? apiVersion.split('/').at(-1) : undefined;
  const name =
    asked ??
    info.versions.find((v) => v.name === fromObject)?.name ??
    info.versions.find((v) => v.storage)?.name;
  const version = info.versions.find((v) => v.name === name);
  if (version === undefined) throw new CrdVersionNotFoundError(info.name, name ?? '');
  return { info, version };
}

/**
 * Validates a custom resource as the API server does when it is created (or, with `oldObject`,
 * updated): unknown fields pruned and reported as warnings, `default`s applied, the schema checked,
 * then the CEL rules run — each within kube's cost limits.
 *
 * Throws `CrdInvalidError` when the CRD itself is invalid and `CrdVersionNotFoundError` for a
 * version the CRD does not declare.
 *
 * @example
 * const { causes, message } = validateCustomResource(crd, website, { oldObject: stored });
 * expect(message).toContain('replicas must be at most 10');
 */
export function validateCustomResource(
  crd: CrdLike,
  object: unknown,
  options: CustomResourceValidationOptions = {},
): CustomResourceValidation {
  const { info, version } = versionOf(crd, object, options.version);
  if (version.schema === undefined) return { causes: [], warnings: [], object, message: undefined };
  const pruned = pruneUnknownFields(version.schema, object);
  const defaulted = applyDefaults(version.schema, pruned.object);
  const oldObject =
    options.oldObject === undefined
      ? undefined
      : applyDefaults(version.schema, pruneUnknownFields(version.schema, options.oldObject).object);
  const causes = validateAgainstSchema(version.schema, defaulted);
  const rules = validateCustomResourceRules(version.schema, defaulted, oldObject, causes);
  causes.push(...rules.causes);
  const warnings = [...unknownFieldWarnings(pruned.pruned), ...rules.warnings];
  const name = (defaulted as { metadata?: { name?: unknown } }).metadata?.name;
  const message =
    causes.length === 0
      ? undefined
      : invalidError(
          { group: info.group, kind: info.names.kind },
          typeof name === 'string' ? name : '',
          causes,
        ).message;
  return { causes, warnings, object: defaulted, message };
}

/**
 * The causes kube-apiserver answers when the CRD is created: its own validation first, then — for
 * a valid CRD — every `x-kubernetes-validations` rule compiled (type errors, unknown fields,
 * `oldSelf` where no old value can be correlated) and its worst-case cost checked against the
 * per-rule and per-CRD budgets. Empty when the CRD would be accepted.
 *
 * @example
 * expect(compileCrdValidations(crd).map((c) => `${c.field}: ${c.message}`)).toEqual([]);
 */
export function compileCrdValidations(crd: CrdLike): StatusCause[] {
  const causes = validateCrd(crd);
  return causes.length > 0 ? causes : crdRuleCauses(crd);
}
