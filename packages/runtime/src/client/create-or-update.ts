import { isNotFound, type ResourceType } from '../backend/index.ts';
import { OptionsError } from '../errors.ts';
import type { KubeObject } from '../object/index.ts';
import { createMergePatch, deepEqual } from '../patch/index.ts';
import type { Client } from './client.ts';
import type { AnyResourceType, UntypedResourceType } from './typed.ts';

/** What createOrUpdate / createOrPatch did. */
export type OperationResult = 'created' | 'updated' | 'unchanged';

/** Builds the desired object from the current one (or from the skeleton when it does not exist yet). */
export type Mutate<T> = (current: T) => T | Promise<T>;

async function current<T extends KubeObject>(
  client: Client,
  type: AnyResourceType,
  skeleton: T,
): Promise<T | undefined> {
  const key = { namespace: skeleton.metadata.namespace ?? '', name: skeleton.metadata.name ?? '' };
  try {
    return await client.get<T>(type, key);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

async function desired<T extends KubeObject>(mutate: Mutate<T>, base: T): Promise<T> {
  const next = await mutate(base);
  if (
    next.metadata.name !== base.metadata.name ||
    (next.metadata.namespace ?? '') !== (base.metadata.namespace ?? '')
  ) {
    throw new OptionsError(
      'mutate',
      next.metadata,
      'a mutate function that keeps metadata.name and metadata.namespace',
    );
  }
  return next;
}

/**
 * Creates the object or updates it so that `mutate(current)` holds (controller-runtime's
 * `CreateOrUpdate`). Reads through the client (cache + read-your-writes); an update carries the
 * read resourceVersion, so a concurrent writer makes it fail with a ConflictError (retry the
 * reconcile). Nothing is written when `mutate` changes nothing.
 *
 * With a typed resource type (`configMapType`) the skeleton, `mutate` and the result have its
 * shape; with a plain `ResourceType` they have the skeleton's type.
 *
 * @example
 * const { result } = await createOrUpdate(client, configMapType, { metadata: { name, namespace } }, (cm) =>
 *   setControllerReference(owner, { ...cm, data: { greeting } }));
 */
export function createOrUpdate<T extends KubeObject, S extends KubeObject = KubeObject>(
  client: Client,
  type: UntypedResourceType<S>,
  skeleton: T,
  mutate: Mutate<T>,
): Promise<{ readonly result: OperationResult; readonly object: T }>;
export function createOrUpdate<T extends KubeObject>(
  client: Client,
  type: ResourceType<T>,
  skeleton: NoInfer<T>,
  mutate: Mutate<NoInfer<T>>,
): Promise<{ readonly result: OperationResult; readonly object: T }>;
export async function createOrUpdate<T extends KubeObject>(
  client: Client,
  type: AnyResourceType,
  skeleton: T,
  mutate: Mutate<T>,
): Promise<{ readonly result: OperationResult; readonly object: T }> {
  const existing = await current(client, type, skeleton);
  if (existing === undefined) {
    const object = await client.create(type, await desired(mutate, skeleton));
    return { result: 'created', object };
  }
  const next = await desired(mutate, existing);
  if (deepEqual(existing, next)) return { result: 'unchanged', object: existing };
  return { result: 'updated', object: await client.update(type, next) };
}

/**
 * Like {@link createOrUpdate}, but sends merge patches of the difference (controller-runtime's
 * `CreateOrPatch`): one for the main resource and, when `.status` changed, one for the status
 * subresource. Fields other writers own are left alone. Typed like {@link createOrUpdate}.
 *
 * @example
 * const { object } = await createOrPatch(client, deploymentType, { metadata: { name, namespace } }, (d) =>
 *   setControllerReference(owner, { ...d, spec: { ...d.spec, replicas } }));
 */
export function createOrPatch<T extends KubeObject, S extends KubeObject = KubeObject>(
  client: Client,
  type: UntypedResourceType<S>,
  skeleton: T,
  mutate: Mutate<T>,
): Promise<{ readonly result: OperationResult; readonly object: T }>;
export function createOrPatch<T extends KubeObject>(
  client: Client,
  type: ResourceType<T>,
  skeleton: NoInfer<T>,
  mutate: Mutate<NoInfer<T>>,
): Promise<{ readonly result: OperationResult; readonly object: T }>;
export async function createOrPatch<T extends KubeObject>(
  client: Client,
  type: AnyResourceType,
  skeleton: T,
  mutate: Mutate<T>,
): Promise<{ readonly result: OperationResult; readonly object: T }> {
  const existing = await current(client, type, skeleton);
  if (existing === undefined) {
    const wanted = await desired(mutate, skeleton);
    let object = await client.create(type, wanted);
    const status = (wanted as { status?: unknown }).status;
    if (
      type.statusSubresource &&
      status !== undefined &&
      !deepEqual(status, (object as { status?: unknown }).status)
    ) {
      object = await client.updateStatus(type, { ...object, status } as T);
    }
    return { result: 'created', object };
  }
  const next = await desired(mutate, existing);
  if (deepEqual(existing, next)) return { result: 'unchanged', object: existing };
  const key = { namespace: existing.metadata.namespace ?? '', name: existing.metadata.name ?? '' };
  const { status: oldStatus, ...oldRest } = existing as T & { status?: unknown };
  const { status: newStatus, ...newRest } = next as T & { status?: unknown };
  let object = existing;
  const main = createMergePatch(oldRest, newRest) as Record<string, unknown>;
  const statusChanged = !deepEqual(oldStatus, newStatus);
  if (Object.keys(main).length > 0 || (statusChanged && !type.statusSubresource)) {
    const patch =
      statusChanged && !type.statusSubresource
        ? { ...main, status: createMergePatch(oldStatus, newStatus) }
        : main;
    object = await client.patch<T>(type, key, { type: 'merge', patch });
  }
  if (statusChanged && type.statusSubresource) {
    object = await client.patch<T>(
      type,
      key,
      { type: 'merge', patch: { status: createMergePatch(oldStatus, newStatus) } },
      { subresource: 'status' },
    );
  }
  return { result: 'updated', object };
}
