import { isNotFound, type KubeObject } from '@converge/runtime';
import { admitMutating, admitValidating, noteWrite } from './admit.ts';
import type { MutableObject } from './api-resource.ts';
import { fenceOption, type RequestContext } from './context.ts';
import { CRD_CLEANUP_FINALIZER, terminatingCondition } from './crd-status.ts';
import { parseDeleteOptions } from './delete-options.ts';
import { isCrdResource } from './handle-create.ts';
import { getStored } from './handle-update.ts';
import { cloneJson } from './json-util.ts';
import { streamList } from './list-stream.ts';
import { fromStorage, manyToResponse, toResponse } from './object-io.ts';
import { parseListQuery } from './query.ts';
import { writeValue } from './respond.ts';
import { listSelection } from './selection.ts';
import { successStatus } from './status.ts';

/**
 * Before a CRD is deleted, kube-apiserver adds the `customresourcecleanup.apiextensions.k8s.io`
 * finalizer and a Terminating condition; the CRD controller then deletes its objects, stops
 * serving it and removes the finalizer.
 */
async function markCrdForCleanup(ctx: RequestContext, current: KubeObject, dryRun: boolean): Promise<void> {
  if (dryRun || current.metadata.deletionTimestamp !== undefined) return;
  const { store } = ctx.server;
  const type = ctx.resource.storage;
  const withStatus = cloneJson(current) as unknown as MutableObject;
  withStatus.status = terminatingCondition(withStatus.status, ctx.server.clock.now());
  const updated = await store.updateStatus<KubeObject>(type, withStatus as unknown as KubeObject);
  const finalizers = updated.metadata.finalizers ?? [];
  if (finalizers.includes(CRD_CLEANUP_FINALIZER)) return;
  const next = cloneJson(updated) as unknown as MutableObject;
  next.metadata.finalizers = [...finalizers, CRD_CLEANUP_FINALIZER];
  await store.update<KubeObject>(type, next as unknown as KubeObject);
}

/**
 * DELETE of one object: a Success Status naming the resource and uid (most kinds), the deleted
 * object (Pod, ServiceAccount), or — when finalizers keep it, and always for Namespaces — the
 * terminating object (200; 202 when the client sent `orphanDependents: false`).
 */
export async function handleDelete(ctx: RequestContext, name: string): Promise<void> {
  const { options, orphanDependents } = await parseDeleteOptions(ctx);
  const { resource, server } = ctx;
  const current = await getStored(ctx, name);
  const admit = { dryRun: options.dryRun === true };
  await admitMutating(ctx, 'DELETE', null, current, admit);
  await admitValidating(ctx, 'DELETE', null, current, admit);
  if (isCrdResource(ctx)) await markCrdForCleanup(ctx, current, options.dryRun === true);
  const result = await server.store.delete(
    resource.storage,
    { namespace: ctx.target.namespace, name },
    { ...options, ...fenceOption(ctx) },
  );
  if (options.dryRun !== true) noteWrite(ctx);
  if (isCrdResource(ctx) && options.dryRun !== true) await server.crds.reconcile(name);
  if (result.status === 'pending') {
    const code = orphanDependents === false ? 202 : 200;
    writeValue(
      ctx.res,
      code,
      await toResponse(resource, result.object),
      { pretty: ctx.pretty },
      ctx.warnings,
    );
    return;
  }
  if (resource.strategy.returnDeletedObject === true) {
    writeValue(ctx.res, 200, await fromStorage(resource, current), { pretty: ctx.pretty }, ctx.warnings);
    return;
  }
  const details = { name, group: resource.group, kind: resource.plural, uid: current.metadata.uid ?? '' };
  writeValue(ctx.res, 200, successStatus(details), { pretty: ctx.pretty }, ctx.warnings);
}

/**
 * DELETE of a collection: deletes every object the label and field selectors select (each with
 * the request's DeleteOptions) and answers with the list of what was deleted or is terminating.
 */
export async function handleDeleteCollection(ctx: RequestContext): Promise<void> {
  const { options } = await parseDeleteOptions(ctx);
  const listQuery = parseListQuery(ctx.query);
  const { resource, server } = ctx;
  const selection = listSelection(ctx, listQuery.labelSelector, listQuery.fieldSelector);
  const page = await server.store.list(resource.storage, selection.storeOptions);
  // through a conversion webhook, field selectors match the requested version's objects
  const matched =
    selection.extra === undefined || resource.converter?.fromStorageMany === undefined
      ? undefined
      : (await manyToResponse(resource, page.items)).map((o) => selection.extra?.(o as KubeObject) === true);
  const deleted: KubeObject[] = [];
  for (const [index, item] of page.items.entries()) {
    if (matched !== undefined ? !matched[index] : selection.extra !== undefined && !selection.extra(item))
      continue;
    const key = { namespace: item.metadata.namespace ?? '', name: item.metadata.name ?? '' };
    const admit = { dryRun: options.dryRun === true };
    await admitMutating(ctx, 'DELETE', null, item, admit);
    await admitValidating(ctx, 'DELETE', null, item, admit);
    try {
      const result = await server.store.delete(resource.storage, key, {
        ...options,
        ...fenceOption(ctx),
        preconditions: { ...options.preconditions, uid: item.metadata.uid ?? '' },
      });
      deleted.push(result.status === 'pending' ? result.object : item);
    } catch (error) {
      if (!isNotFound(error) && (error as { reason?: string }).reason !== 'Conflict') throw error;
    }
  }
  const envelope = {
    kind: resource.listKind,
    apiVersion: resource.group === '' ? resource.version : `${resource.group}/${resource.version}`,
    metadata: { resourceVersion: String(server.store.revision) },
  };
  if (options.dryRun !== true && deleted.length > 0) noteWrite(ctx);
  const served = await manyToResponse(resource, deleted);
  await streamList(ctx.res, envelope, served, (item) => JSON.stringify(item), ctx.warnings);
}
