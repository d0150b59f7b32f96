import { isNotFound, type KubeObject } from '@converge/runtime';
import { admitMutating, admitValidating, noteWrite } from './admit.ts';
import type { MutableObject } from './api-resource.ts';
import { fenceOption, type RequestContext } from './context.ts';
import { createObject, isCrdResource } from './handle-create.ts';
import { cloneJson } from './json-util.ts';
import { checkStoredObjectSize } from './limits.ts';
import { checkIdentity, readObjectBody, toResponse, toStorage } from './object-io.ts';
import { admitPodBuiltins } from './pod-admission.ts';
import { parseWriteQuery, type WriteQuery } from './query.ts';
import { writeValue } from './respond.ts';
import { yieldBetweenStages } from './stage-yield.ts';
import { handleUnknownFields } from './unknown-fields.ts';
import { prepareStatus, prepareUpdate } from './write-strategy.ts';

/** The object at the request's key in the store. */
export function getStored(ctx: RequestContext, name: string): Promise<KubeObject> {
  return ctx.server.store.get(ctx.resource.storage, { namespace: ctx.target.namespace, name });
}

/**
 * Writes `object` (served shape) over `old`: for the main resource the update strategy runs and
 * the store applies its own (generation, status kept, optimistic concurrency); for `/status` only
 * `.status` changes — natively in the store, or here for kinds whose status the server emulates.
 */
export async function updateObject(
  ctx: RequestContext,
  object: MutableObject,
  old: KubeObject,
  write: WriteQuery,
  subresource: 'status' | undefined,
): Promise<KubeObject> {
  const { resource, server } = ctx;
  const options = { dryRun: write.dryRun, fieldManager: write.fieldManager, ...fenceOption(ctx) };
  let stored: KubeObject;
  await admitPodBuiltins(ctx, object, old);
  await admitMutating(ctx, 'UPDATE', object, old, write);
  if (subresource === 'status') {
    await prepareStatus(ctx, object, old, write);
    await admitValidating(ctx, 'UPDATE', object, old, write);
    if (resource.emulateStatus === true) {
      const next = cloneJson(old) as unknown as MutableObject;
      if (object.status === undefined) delete next.status;
      else next.status = object.status;
      next.metadata.resourceVersion = object.metadata.resourceVersion ?? '';
      if (object.metadata.managedFields !== undefined)
        next.metadata.managedFields = object.metadata.managedFields;
      checkStoredObjectSize(resource.storage, next, false);
      stored = await server.store.update(resource.storage, next, options);
    } else {
      const storage = await toStorage(resource, object);
      checkStoredObjectSize(resource.storage, storage, false);
      stored = await server.store.updateStatus(resource.storage, storage, options);
    }
  } else {
    // With a resourceVersion the store refuses the write when the object changed meanwhile (409),
    // so other requests may run between the stages; without one, the stages stay back to back.
    const guarded =
      typeof object.metadata.resourceVersion === 'string' && object.metadata.resourceVersion !== '';
    await prepareUpdate(ctx, object, old, write);
    if (guarded) await yieldBetweenStages(ctx.req);
    await admitValidating(ctx, 'UPDATE', object, old, write);
    const storage = await toStorage(resource, object);
    checkStoredObjectSize(resource.storage, storage, false);
    if (guarded) await yieldBetweenStages(ctx.req);
    stored = await server.store.update(resource.storage, storage, options);
  }
  if (!write.dryRun) noteWrite(ctx, stored);
  if (isCrdResource(ctx) && !write.dryRun) await server.crds.reconcile(stored.metadata.name ?? '');
  return stored;
}

/**
 * PUT: replace the object (or its status). A stale resourceVersion is a 409; a missing one is a
 * 422 for custom resources; a missing object is a 404 — or, for kinds that allow it (Lease), created
 * with 201.
 */
export async function handleUpdate(ctx: RequestContext, name: string): Promise<void> {
  const write = parseWriteQuery(ctx.query, 'UpdateOptions', ctx.req.headers['user-agent']);
  const object = checkIdentity(ctx, await readObjectBody(ctx), name);
  await yieldBetweenStages(ctx.req);
  handleUnknownFields(ctx.resource, object, write.fieldValidation, ctx.server.extensions, (w) =>
    ctx.warnings.push(w),
  );
  await yieldBetweenStages(ctx.req);
  const subresource = ctx.target.subresource === 'status' ? 'status' : undefined;
  let old: KubeObject | undefined;
  try {
    old = await getStored(ctx, name);
  } catch (error) {
    if (!isNotFound(error) || ctx.resource.strategy.allowCreateOnUpdate !== true || subresource !== undefined)
      throw error;
  }
  if (old === undefined) {
    delete object.metadata.resourceVersion;
    const created = await createObject(ctx, object, write);
    writeValue(ctx.res, 201, await toResponse(ctx.resource, created), { pretty: ctx.pretty }, ctx.warnings);
    return;
  }
  const stored = await updateObject(ctx, object, old, write, subresource);
  await yieldBetweenStages(ctx.req);
  writeValue(ctx.res, 200, await toResponse(ctx.resource, stored), { pretty: ctx.pretty }, ctx.warnings);
}
