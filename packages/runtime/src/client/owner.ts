import { groupOf, type KubeObject, type OwnerReference } from '../object/index.ts';
import { AlreadyOwnedError, InvalidOwnerError } from './errors.ts';

/** How to identify the owner: its object (with apiVersion, kind, name, uid) and whether it is cluster-scoped. */
export interface OwnerOptions {
  /** Set when the owner is cluster-scoped (it may then own objects in any namespace). Default: inferred from `metadata.namespace` being empty. */
  readonly clusterScoped?: boolean;
  /** `blockOwnerDeletion` on the reference. Default true for controller references, unset otherwise. */
  readonly blockOwnerDeletion?: boolean;
}

function referenceTo(owner: KubeObject, controller: boolean, options: OwnerOptions): OwnerReference {
  const { apiVersion, kind } = owner;
  const { name, uid } = owner.metadata;
  if (!apiVersion || !kind) throw new InvalidOwnerError('owner must have apiVersion and kind');
  if (!name || !uid)
    throw new InvalidOwnerError(
      `owner ${kind} must have metadata.name and metadata.uid (read it from the backend first)`,
    );
  const block = options.blockOwnerDeletion ?? (controller ? true : undefined);
  return {
    apiVersion,
    kind,
    name,
    uid,
    ...(controller ? { controller: true } : {}),
    ...(block === undefined ? {} : { blockOwnerDeletion: block }),
  };
}

function checkScope(owner: KubeObject, object: KubeObject, options: OwnerOptions): void {
  const ownerNs = owner.metadata.namespace ?? '';
  const clusterScoped = options.clusterScoped ?? ownerNs === '';
  if (clusterScoped) return;
  const objectNs = object.metadata.namespace ?? '';
  if (objectNs === '') {
    throw new InvalidOwnerError(
      `cluster-scoped object ${object.metadata.name} must not have a namespace-scoped owner (${ownerNs})`,
    );
  }
  if (objectNs !== ownerNs) {
    throw new InvalidOwnerError(
      `cross-namespace owner references are disallowed: owner ${ownerNs}, object ${objectNs}`,
    );
  }
}

function sameOwner(a: OwnerReference, b: OwnerReference): boolean {
  return groupOf(a.apiVersion) === groupOf(b.apiVersion) && a.kind === b.kind && a.name === b.name;
}

function withReference<T extends KubeObject>(object: T, ref: OwnerReference): T {
  const refs = [...(object.metadata.ownerReferences ?? [])];
  const i = refs.findIndex((r) => sameOwner(r, ref));
  if (i >= 0) refs[i] = ref;
  else refs.push(ref);
  return { ...object, metadata: { ...object.metadata, ownerReferences: refs } };
}

/**
 * Returns a copy of `object` whose controller reference is `owner` (controller-runtime's
 * `SetControllerReference`): garbage collection deletes it with the owner, and
 * `enqueueForOwner({ onlyController: true })` maps its events to the owner. Throws
 * {@link AlreadyOwnedError} if another object controls it, {@link InvalidOwnerError} across namespaces.
 *
 * @example
 * const cm = setControllerReference(website, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace } });
 */
export function setControllerReference<T extends KubeObject>(
  owner: KubeObject,
  object: T,
  options: OwnerOptions = {},
): T {
  const ref = referenceTo(owner, true, options);
  checkScope(owner, object, options);
  const existing = object.metadata.ownerReferences?.find((r) => r.controller === true);
  if (existing !== undefined && !sameOwner(existing, ref)) {
    throw new AlreadyOwnedError(`${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`, existing);
  }
  return withReference(object, ref);
}

/** Returns a copy of `object` with a non-controller owner reference to `owner` (updated if present). */
export function setOwnerReference<T extends KubeObject>(
  owner: KubeObject,
  object: T,
  options: OwnerOptions = {},
): T {
  const ref = referenceTo(owner, false, options);
  checkScope(owner, object, options);
  const existing = object.metadata.ownerReferences?.find((r) => sameOwner(r, ref));
  return withReference(object, existing?.controller === true ? { ...ref, controller: true } : ref);
}

/** The controller reference of an object, if any. */
export function controllerOf(object: KubeObject): OwnerReference | undefined {
  return object.metadata.ownerReferences?.find((r) => r.controller === true);
}

/** Returns a copy of `object` without references to `owner` (matched by uid). */
export function removeOwnerReference<T extends KubeObject>(owner: KubeObject, object: T): T {
  const refs = object.metadata.ownerReferences ?? [];
  const kept = refs.filter((r) => r.uid !== owner.metadata.uid);
  if (kept.length === refs.length) return object;
  return { ...object, metadata: { ...object.metadata, ownerReferences: kept } };
}
