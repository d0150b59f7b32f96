import { type ResourceType, resourceType } from '../backend/index.ts';
import { ConvergeError, type ConvergeErrorOptions } from '../errors.ts';
import type { CustomResourceDefinition } from '../kinds/index.ts';

/** Stable codes of the errors of CRD following. */
export const CrdErrorCodes = {
  /** A CustomResourceDefinition too malformed to say which kind it serves. */
  MALFORMED: 'CONVERGE_ERR_DYNAMIC_CRD_MALFORMED',
} as const;

/**
 * A CustomResourceDefinition that does not say which kind to serve: no storage version, no served
 * version, an unknown scope, names that are not Kubernetes names, … `crd` is its name ('' when it
 * has none), `reason` what is wrong, in words. A `CrdFollower` logs it and does not serve the CRD
 * until it changes.
 */
export class MalformedCrdError extends ConvergeError {
  readonly crd: string;
  readonly reason: string;

  constructor(crd: string, reason: string, options?: ConvergeErrorOptions) {
    super(CrdErrorCodes.MALFORMED, `CustomResourceDefinition "${crd}" cannot be served: ${reason}`, options);
    this.crd = crd;
    this.reason = reason;
  }
}

type Json = Readonly<Record<string, unknown>>;

function object(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;
const STABILITY: Readonly<Record<string, number>> = { alpha: 0, beta: 1, ga: 2 };

/**
 * Kubernetes' order of API versions, most preferred first (the order discovery lists them in):
 * GA before beta before alpha, higher numbers first (`v2`, `v1`, `v1beta2`, `v1beta1`, `v1alpha1`),
 * then versions of other shapes by name.
 */
export function compareKubeVersions(a: string, b: string): number {
  const x = KUBE_VERSION.exec(a);
  const y = KUBE_VERSION.exec(b);
  if (x === null || y === null) {
    if (x !== null) return -1;
    if (y !== null) return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  const stability = (m: RegExpExecArray): number => STABILITY[m[2] ?? 'ga'] ?? 0;
  return stability(y) - stability(x) || Number(y[1]) - Number(x[1]) || Number(y[3] ?? 0) - Number(x[3] ?? 0);
}

/**
 * The version of a CRD to serve: its storage version when that is served, which is the usual
 * case. Kubernetes lets a CRD stop serving its storage version (while it migrates stored objects
 * away from it); a client cannot list or watch an unserved version, so then the most preferred
 * served version (as `kubectl` and discovery pick it, see {@link compareKubeVersions}) is served
 * instead: the API server converts the stored objects to it.
 */
function versionToServe(name: string, spec: Json): Json {
  const versions = spec.versions;
  if (!Array.isArray(versions) || versions.length === 0)
    throw new MalformedCrdError(name, 'spec.versions is not a non-empty list');
  const all = versions.map(object);
  if (all.some((v) => v === undefined || !nonEmpty(v.name)))
    throw new MalformedCrdError(name, 'a version in spec.versions has no name');
  const defined = all as Json[];
  const storage = defined.filter((v) => v.storage === true);
  if (storage.length !== 1) {
    throw new MalformedCrdError(
      name,
      `spec.versions has ${storage.length} storage versions; Kubernetes requires exactly one`,
    );
  }
  const stored = storage[0] as Json;
  if (stored.served === true) return stored;
  const served = defined
    .filter((v) => v.served === true)
    .sort((a, b) => compareKubeVersions(a.name as string, b.name as string));
  return served[0] ?? throwMalformed(name, 'no version in spec.versions is served');
}

function throwMalformed(name: string, reason: string): never {
  throw new MalformedCrdError(name, reason);
}

function shortNamesOf(name: string, names: Json): readonly string[] {
  const shortNames = names.shortNames;
  if (shortNames === undefined || shortNames === null) return [];
  if (!Array.isArray(shortNames) || !shortNames.every(nonEmpty))
    throw new MalformedCrdError(name, 'spec.names.shortNames is not a list of names');
  return shortNames;
}

/**
 * The kind a CustomResourceDefinition serves, as a {@link ResourceType}: its group, the version
 * to serve (the storage version; if the storage version is not served, the most preferred served
 * one), kind, plural, singular and short names from `spec.names`, `namespaced` from `spec.scope`, a
 * status subresource when that version declares one, and, as for every custom resource,
 * `generation` tracked and updates that must carry a resourceVersion.
 *
 * Throws a {@link MalformedCrdError} — and nothing else, whatever the object — when the CRD
 * does not say: no group, names that are not Kubernetes names, a `metadata.name` other than
 * `<plural>.<group>`, not exactly one storage version, no served version, a scope other than
 * `Namespaced` or `Cluster`.
 *
 * @example
 * const type = resourceTypeOfCrd(crd); // { group: 'example.com', version: 'v1', kind: 'Website', … }
 * const sites = await client.list(type, { namespace: 'default' });
 */
export function resourceTypeOfCrd(crd: CustomResourceDefinition): ResourceType {
  const root = object(crd);
  const name = object(root?.metadata)?.name;
  const crdName = typeof name === 'string' ? name : '';
  const spec = object(root?.spec) ?? throwMalformed(crdName, 'it has no spec');
  const names = object(spec.names) ?? throwMalformed(crdName, 'it has no spec.names');
  const { group } = spec;
  const { kind, plural, singular } = names;
  if (!nonEmpty(group)) throw new MalformedCrdError(crdName, 'spec.group is empty');
  if (!nonEmpty(plural)) throw new MalformedCrdError(crdName, 'spec.names.plural is empty');
  if (!nonEmpty(kind)) throw new MalformedCrdError(crdName, 'spec.names.kind is empty');
  if (crdName !== `${plural}.${group}`) {
    throw new MalformedCrdError(crdName, `its name is not ${plural}.${group} (spec.names.plural.spec.group)`);
  }
  if (singular !== undefined && singular !== null && typeof singular !== 'string')
    throw new MalformedCrdError(crdName, 'spec.names.singular is not a string');
  const namespaced =
    spec.scope === 'Namespaced'
      ? true
      : spec.scope === 'Cluster'
        ? false
        : throwMalformed(crdName, 'spec.scope is neither Namespaced nor Cluster');
  const version = versionToServe(crdName, spec);
  try {
    return resourceType({
      group,
      version: version.name as string,
      kind,
      plural,
      namespaced,
      ...(nonEmpty(singular) ? { singular } : {}),
      shortNames: shortNamesOf(crdName, names),
      statusSubresource: object(object(version.subresources)?.status) !== undefined,
      generation: true,
      requireResourceVersionOnUpdate: true,
    });
  } catch (error) {
    if (error instanceof MalformedCrdError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new MalformedCrdError(crdName, reason, { cause: error });
  }
}

/**
 * Whether the API server serves a CRD's kind: its `Established` condition is `True` and its
 * `NamesAccepted` condition is not `False` (names that conflict with another kind's are not
 * served). A CRD being deleted stays established until its custom resources are gone, so its kind
 * stays served meanwhile (their finalizers still need a reconciler). Never throws.
 */
export function isEstablished(crd: CustomResourceDefinition): boolean {
  const conditions = object(object(crd)?.status)?.conditions;
  if (!Array.isArray(conditions)) return false;
  const status = (type: string): unknown =>
    conditions.map(object).find((c) => c !== undefined && c.type === type)?.status;
  return status('Established') === 'True' && status('NamesAccepted') !== 'False';
}
