import {
  AlreadyExistsError,
  apiVersionOf,
  BadRequestError,
  type DeleteOptions,
  type DeleteResult,
  type Patch,
  qualifiedResource,
  UnsupportedError,
} from '../../../backend/index.ts';
import type { KubeObject, ObjectKey } from '../../../object/index.ts';
import { type Engine, type MetaChanges, type Served, withMetadata } from './engine.ts';
import { isJsonObject, type JsonObject, toJson } from './json.ts';
import { applyJsonPatch, applyMergePatch } from './patch.ts';
import { FieldErrors, requireMetadata, validateMeta } from './validation.ts';

const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const GENERATE_ATTEMPTS = 8;

/** Copies the input as JSON and fixes apiVersion and kind (a mismatch is a BadRequestError). */
function normalise({ type }: Served, input: unknown): KubeObject {
  requireMetadata(input, type);
  const object = toJson(input) as unknown as JsonObject & KubeObject;
  const apiVersion = apiVersionOf(type);
  if (object.apiVersion !== undefined && object.apiVersion !== apiVersion) {
    throw new BadRequestError(
      `the API version in the data (${String(object.apiVersion)}) does not match the expected API version (${apiVersion})`,
    );
  }
  if (object.kind !== undefined && object.kind !== type.kind) {
    throw new BadRequestError(
      `the kind in the data (${String(object.kind)}) does not match the expected kind (${type.kind})`,
    );
  }
  return { ...object, apiVersion, kind: type.kind };
}

function keyOf(engine: Engine, { type }: Served, object: KubeObject): ObjectKey {
  const name = object.metadata.name;
  if (typeof name !== 'string' || name === '') {
    const errors = new FieldErrors();
    errors.required('metadata.name', 'name is required');
    errors.throwIfAny(type, undefined);
  }
  const key = { namespace: object.metadata.namespace ?? '', name: name as string };
  engine.checkKey(type, key);
  return key;
}

/** Creates an object: server fields, generateName, generation, status dropped with a subresource. */
export function create(engine: Engine, served: Served, input: unknown, dryRun: boolean): KubeObject {
  const { type, id } = served;
  const object = normalise(served, input);
  const meta = object.metadata;
  const namespace = meta.namespace ?? '';
  if (!type.namespaced && namespace !== '') {
    throw new BadRequestError(
      `${qualifiedResource(type)} is cluster-scoped: an object of it cannot have a namespace`,
    );
  }
  const errors = new FieldErrors();
  if (meta.resourceVersion !== undefined && meta.resourceVersion !== '') {
    errors.invalid('metadata.resourceVersion', 'must not be set on objects to be created');
  }
  let name = meta.name ?? '';
  if (name === '' && typeof meta.generateName === 'string' && meta.generateName !== '') {
    for (let attempt = 0; attempt < GENERATE_ATTEMPTS; attempt++) {
      let suffix = '';
      for (let i = 0; i < 5; i++) {
        suffix += GENERATE_ALPHABET.charAt(Math.floor(engine.clock.random() * GENERATE_ALPHABET.length));
      }
      name = `${meta.generateName}${suffix}`;
      if (engine.store.latest(id, { namespace, name }) === undefined) break;
    }
  }
  const changes: MetaChanges = {
    name: name === '' ? undefined : name,
    uid: globalThis.crypto.randomUUID(),
    creationTimestamp: engine.timestamp(),
    resourceVersion: undefined,
    deletionTimestamp: undefined,
    deletionGracePeriodSeconds: undefined,
    generation: type.generation === false ? undefined : 1,
  };
  let next = withMetadata(object, changes);
  if (type.statusSubresource === true) {
    const { status: _dropped, ...rest } = next as KubeObject & { status?: unknown };
    next = rest;
  }
  validateMeta(errors, next, type);
  errors.throwIfAny(type, name === '' ? undefined : name);
  const key = { namespace, name };
  const existing = engine.store.latest(id, key);
  if (existing !== undefined) {
    const deleting = existing.metadata.deletionTimestamp === undefined ? '' : 'object is being deleted: ';
    throw new AlreadyExistsError(
      `${deleting}${qualifiedResource(type)} ${JSON.stringify(name)} already exists`,
      {
        details: { name, group: type.group, kind: type.plural },
      },
    );
  }
  return dryRun ? next : engine.put(id, key, next);
}

/** Checks the resourceVersion and uid of an update against the stored object. */
function preconditions(engine: Engine, { type }: Served, object: KubeObject, current: KubeObject): void {
  const { resourceVersion, uid, name = '' } = object.metadata;
  if (resourceVersion === undefined || resourceVersion === '') {
    if (type.requireResourceVersionOnUpdate === true) {
      const errors = new FieldErrors();
      errors.invalid('metadata.resourceVersion', '0: must be specified for an update');
      errors.throwIfAny(type, name);
    }
  } else if (resourceVersion !== current.metadata.resourceVersion) {
    throw engine.conflict(
      type,
      name,
      'the object has been modified; please apply your changes to the latest version and try again',
    );
  }
  if (uid !== undefined && uid !== '' && uid !== current.metadata.uid) {
    throw engine.conflict(
      type,
      name,
      `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${current.metadata.uid}`,
    );
  }
}

/** Replaces an object; with a status subresource, the stored status is kept. */
export function update(engine: Engine, served: Served, input: unknown, dryRun: boolean): KubeObject {
  const object = normalise(served, input);
  const current = engine.current(served, keyOf(engine, served, object));
  preconditions(engine, served, object, current);
  const { uid, creationTimestamp, deletionTimestamp, deletionGracePeriodSeconds, generation } =
    current.metadata;
  let next = withMetadata(object, {
    uid,
    creationTimestamp,
    deletionTimestamp,
    deletionGracePeriodSeconds,
    generation,
  });
  if (served.type.statusSubresource === true) {
    const { status: _ignored, ...rest } = next as KubeObject & { status?: unknown };
    const { status } = current as KubeObject & { status?: unknown };
    next = status === undefined ? rest : ({ ...rest, status } as KubeObject);
  }
  return engine.commitUpdate(served, current, next, dryRun);
}

/** Replaces only `.status` (like update without a status subresource). */
export function updateStatus(engine: Engine, served: Served, input: unknown, dryRun: boolean): KubeObject {
  if (served.type.statusSubresource !== true) return update(engine, served, input, dryRun);
  const object = normalise(served, input);
  const current = engine.current(served, keyOf(engine, served, object));
  preconditions(engine, served, object, current);
  const { status: _old, ...rest } = current as KubeObject & { status?: unknown };
  const status = (object as KubeObject & { status?: unknown }).status;
  const next = status === undefined ? rest : ({ ...rest, status } as KubeObject);
  return engine.commitUpdate(served, current, next, dryRun);
}

/** Applies a merge or JSON patch, then updates the main resource or the status. */
export function patch(
  engine: Engine,
  served: Served,
  key: ObjectKey,
  change: Patch,
  subresource: 'status' | undefined,
  dryRun: boolean,
): KubeObject {
  const current = engine.current(served, key);
  let patched: unknown;
  switch (change.type) {
    case 'merge':
      if (!isJsonObject(change.patch)) throw new BadRequestError('a merge patch must be a JSON object');
      patched = applyMergePatch(toJson(current), change.patch);
      break;
    case 'json':
      patched = applyJsonPatch(toJson(current), change.patch);
      break;
    case 'strategic':
    case 'apply':
      throw new UnsupportedError(`${change.type} patches are not supported by the reference backend`);
  }
  requireMetadata(patched, served.type);
  const { name, namespace = '', resourceVersion } = patched.metadata;
  if (name !== key.name || namespace !== key.namespace) {
    const errors = new FieldErrors();
    errors.invalid('metadata.name', 'name and namespace cannot be changed by a patch');
    errors.throwIfAny(served.type, key.name);
  }
  if (resourceVersion !== undefined && resourceVersion !== current.metadata.resourceVersion) {
    throw engine.conflict(
      served.type,
      key.name,
      'the object has been modified; please apply your changes to the latest version and try again',
    );
  }
  const target = withMetadata(patched, { resourceVersion: current.metadata.resourceVersion });
  return subresource === 'status'
    ? updateStatus(engine, served, target, dryRun)
    : update(engine, served, target, dryRun);
}

/** Deletes an object, or marks it terminating while finalizers (incl. the policy's) remain. */
export function remove(
  engine: Engine,
  served: Served,
  key: ObjectKey,
  options: DeleteOptions,
): DeleteResult<KubeObject> {
  const { type, id } = served;
  const current = engine.current(served, key);
  const { uid, resourceVersion } = options.preconditions ?? {};
  if (uid !== undefined && uid !== current.metadata.uid) {
    throw engine.conflict(
      type,
      key.name,
      `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${current.metadata.uid}`,
    );
  }
  if (resourceVersion !== undefined && resourceVersion !== current.metadata.resourceVersion) {
    throw engine.conflict(
      type,
      key.name,
      `Precondition failed: ResourceVersion in precondition: ${resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion}`,
    );
  }
  const finalizers = [...(current.metadata.finalizers ?? [])];
  const policy = options.propagationPolicy ?? 'Background';
  const added = policy === 'Orphan' ? 'orphan' : policy === 'Foreground' ? 'foregroundDeletion' : undefined;
  if (added !== undefined && !finalizers.includes(added)) finalizers.push(added);
  const dryRun = options.dryRun === true;
  if (finalizers.length === 0) {
    if (!dryRun) engine.remove(id, key);
    return { status: 'deleted' };
  }
  const terminating = current.metadata.deletionTimestamp !== undefined;
  const generation = current.metadata.generation;
  const next = withMetadata(current, {
    finalizers,
    deletionTimestamp: current.metadata.deletionTimestamp ?? engine.timestamp(),
    deletionGracePeriodSeconds: current.metadata.deletionGracePeriodSeconds ?? 0,
    generation: !terminating && generation !== undefined && generation > 0 ? generation + 1 : generation,
  });
  // The generation bump of a new deletion is not a spec change: store the object as built.
  if (dryRun) return { status: 'pending', object: next };
  const stored =
    terminating && finalizers.length === (current.metadata.finalizers ?? []).length
      ? current
      : engine.put(id, key, next);
  return { status: 'pending', object: stored };
}
