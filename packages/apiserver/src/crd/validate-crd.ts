/**
 * Validation of a CustomResourceDefinition as kube-apiserver's apiextensions strategy runs it on
 * create and update, with its field paths and messages.
 */
import type { StatusCause } from '@converge/runtime';
import { ratchetReviewVersions } from './conversion-validation.ts';
import { defaultCrd, type InternalSpec, internalSpec, versionsOf } from './crd-defaults.ts';
import { validateNames } from './crd-parts.ts';
import { validateSpec } from './crd-spec.ts';
import { assertDecodableCrd } from './decode.ts';
import { forbidden, GoLiteral, goStrings, invalid, path, required } from './field-errors.ts';
import { goQuote } from './go-format.ts';
import { isObject, type JsonObject, own } from './json.ts';
import { isDns1123Subdomain } from './names.ts';
import type { CustomResourceDefinition } from './types.ts';

function str(o: unknown, key: string): string {
  const v = isObject(o) ? own(o, key) : undefined;
  return typeof v === 'string' ? v : '';
}

function validateStoredVersions(crd: JsonObject, internal: InternalSpec, out: StatusCause[]): void {
  const at = 'status.storedVersions';
  const status = own(crd, 'status');
  const raw = isObject(status) ? own(status, 'storedVersions') : undefined;
  const stored = Array.isArray(raw) ? raw.filter((s): s is string => typeof s === 'string') : [];
  if (stored.length === 0) {
    out.push(invalid(at, new GoLiteral('[]string(nil)'), 'must have at least one stored version'));
    return;
  }
  const remaining = new Map(stored.map((v, i) => [v, i]));
  for (const v of internal.versions) {
    const name = str(v, 'name');
    if (own(v, 'storage') === true && !remaining.has(name))
      out.push(invalid(at, goStrings(stored), `must have the storage version ${name}`));
    remaining.delete(name);
  }
  for (const [v, i] of remaining) {
    out.push(
      invalid(
        path.index(at, i),
        v,
        `missing from spec.versions; ${v} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in ${v} and removes ${v} from status.storedVersions`,
      ),
    );
  }
}

function validateApproval(
  meta: JsonObject,
  group: string,
  oldApproval: string | undefined,
  out: StatusCause[],
): void {
  const protectedGroup =
    group === 'k8s.io' ||
    group.endsWith('.k8s.io') ||
    group === 'kubernetes.io' ||
    group.endsWith('.kubernetes.io');
  if (!protectedGroup) return;
  const key = 'api-approved.kubernetes.io';
  const value = str(own(meta, 'annotations'), key);
  const state = (v: string): string =>
    v === ''
      ? 'missing'
      : v.startsWith('unapproved')
        ? 'bypassed'
        : /^[a-z][a-z0-9+.-]*:\/\/[^/\s]+/i.test(v)
          ? 'approved'
          : 'invalid';
  if (oldApproval !== undefined && state(oldApproval) === state(value)) return;
  const at = path.key('metadata.annotations', key);
  if (state(value) === 'missing') {
    out.push(
      required(
        at,
        `protected groups must have approval annotation ${goQuote(key)}, see https://github.com/kubernetes/enhancements/pull/1111`,
      ),
    );
  } else if (state(value) === 'invalid') {
    out.push(
      invalid(
        at,
        value,
        `protected groups must have approval annotation ${goQuote(key)} with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111`,
      ),
    );
  }
}

function validate(input: unknown, old: CustomResourceDefinition | undefined): StatusCause[] {
  assertDecodableCrd(input);
  const crd = defaultCrd(input as CustomResourceDefinition) as unknown as JsonObject;
  const spec = isObject(crd.spec) ? crd.spec : {};
  const internal = internalSpec(spec);
  const out: StatusCause[] = [];
  const meta = isObject(crd.metadata) ? crd.metadata : {};
  const name = str(meta, 'name');
  if (name === '' && str(meta, 'generateName') === '') {
    out.push(required('metadata.name', 'name or generateName is required'));
  } else if (name !== '') {
    for (const msg of isDns1123Subdomain(name)) out.push(invalid('metadata.name', name, msg));
    const names = own(spec, 'names');
    if (name !== `${str(names, 'plural')}.${str(spec, 'group')}`)
      out.push(invalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group'));
  }
  if (str(meta, 'namespace') !== '') out.push(forbidden('metadata.namespace', 'not allowed on this type'));
  validateSpec(internal, out);
  if (old !== undefined) ratchetReviewVersions(old, out);
  if (old !== undefined) {
    const oldSpec = old.spec as unknown as JsonObject;
    const established =
      old.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') === true;
    const immutable = (at: string, now: string, before: string): void => {
      if (now !== before) out.push(invalid(at, now, 'field is immutable'));
    };
    if (established) {
      immutable('spec.scope', str(spec, 'scope'), str(oldSpec, 'scope'));
      immutable('spec.names.kind', str(own(spec, 'names'), 'kind'), str(own(oldSpec, 'names'), 'kind'));
    }
    immutable('spec.group', str(spec, 'group'), str(oldSpec, 'group'));
    immutable('spec.names.plural', str(own(spec, 'names'), 'plural'), str(own(oldSpec, 'names'), 'plural'));
  }
  const status = own(crd, 'status');
  const accepted = isObject(status) ? own(status, 'acceptedNames') : undefined;
  if (isObject(accepted)) validateNames(accepted, 'status.acceptedNames', out);
  validateStoredVersions(crd, internal, out);
  const oldApproval =
    old === undefined ? undefined : (old.metadata.annotations?.['api-approved.kubernetes.io'] ?? '');
  validateApproval(meta, str(spec, 'group'), oldApproval, out);
  if (own(spec, 'preserveUnknownFields') === true && old?.spec.preserveUnknownFields !== true) {
    out.push(
      invalid(
        'spec.preserveUnknownFields',
        true,
        'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
      ),
    );
  }
  return out;
}

/** The object kube-apiserver validates on create: defaults applied, `status` reset to the stored version. */
function prepareForCreate(input: unknown): unknown {
  if (!isObject(input)) return input;
  const { status: _ignored, ...rest } = input;
  return rest;
}

/**
 * Validates a CustomResourceDefinition being created, as kube-apiserver does: defaults applied
 * (`singular`, `listKind`, `conversion`), any given `status` replaced, then the metadata name
 * (`<plural>.<group>`), group, scope, names, versions (exactly one storage version, unique DNS-1035
 * names), each schema (structural rules, valid and pruned defaults, the supported OpenAPI subset,
 * list/map types), subresources, printer columns, selectable fields, conversion, stored versions and
 * API approval for `*.k8s.io` groups. Returns the causes of a 422 (empty when valid).
 *
 * Throws {@link CrdDecodeError} (a 400) when a field has the wrong JSON type.
 *
 * @example
 * const causes = validateCrd(body);
 * if (causes.length > 0) throw invalidError({ group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition' }, body.metadata.name, causes);
 */
export function validateCrd(crd: unknown): StatusCause[] {
  assertDecodableCrd(crd);
  return validate(prepareForCreate(crd), undefined);
}

/**
 * Validates an update of a CRD against the stored one: everything {@link validateCrd} checks, with
 * `status` carried over from `old`, plus the immutable group and plural (and, once Established,
 * scope and kind). Throws {@link CrdDecodeError} like validateCrd.
 */
export function validateCrdUpdate(crd: unknown, old: CustomResourceDefinition): StatusCause[] {
  assertDecodableCrd(crd);
  if (!isObject(crd)) return validate(crd, old);
  const stored = [...(old.status?.storedVersions ?? [])];
  const storage = versionsOf(isObject(crd.spec) ? crd.spec : {}).find((v) => own(v, 'storage') === true);
  const storageName = str(storage, 'name');
  if (storageName !== '' && !stored.includes(storageName)) stored.push(storageName);
  return validate({ ...crd, status: { ...(old.status ?? {}), storedVersions: stored } }, old);
}
