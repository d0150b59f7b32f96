import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Fence, NotFoundError } from '@converge/runtime';
import type { ApiResource } from './api-resource.ts';
import { type RequestContext, requestFence, type ServerContext } from './context.ts';
import { methodNotAllowed, methodNotSupported } from './errors.ts';
import { handleCreate } from './handle-create.ts';
import { handleDelete, handleDeleteCollection } from './handle-delete.ts';
import { handlePatch } from './handle-patch.ts';
import { handleGet, handleList } from './handle-read.ts';
import { handleScale } from './handle-scale.ts';
import { handleUpdate } from './handle-update.ts';
import { handleWatch } from './handle-watch.ts';
import { handleLegacyBinding, handlePodSubresource, isPodSubresource } from './pod-subresources.ts';
import { parseListQuery, queryBool } from './query.ts';
import type { ResourceTarget } from './request-info.ts';
import { handleReview, isReview } from './reviews.ts';
import { handleTokenRequest } from './token-request.ts';

function fenceEntry(fence: Fence | undefined): { readonly fence?: Fence } {
  return fence === undefined ? {} : { fence };
}

/** Kubernetes' answer for a path that serves nothing. */
export function unknownResource(): NotFoundError {
  return new NotFoundError('the server could not find the requested resource', { details: {} });
}

/** The resource a path addresses, if it exists with that scope and subresource. */
function resolve(server: ServerContext, target: ResourceTarget): ApiResource {
  const resource = server.registry.lookup(target.group, target.version, target.resource);
  if (resource === undefined) throw unknownResource();
  if (!resource.namespaced && target.namespace !== '') throw unknownResource();
  if (resource.namespaced && target.namespace === '' && target.name !== undefined) throw unknownResource();
  const sub = target.subresource;
  if (sub !== undefined) {
    const served =
      (sub === 'status' && resource.statusSubresource) ||
      (sub === 'scale' && resource.scale !== undefined) ||
      isPodSubresource(target.group, target.resource, sub) ||
      (sub === 'token' && target.group === '' && target.resource === 'serviceaccounts');
    if (!served || (target.watchPath === true && sub !== undefined)) throw unknownResource();
  }
  return resource;
}

/** A CertificateSigningRequest's `approval` subresource writes its status conditions, as `status` does. */
function csrApprovalAsStatus(target: ResourceTarget): ResourceTarget {
  const approval =
    target.subresource === 'approval' &&
    target.group === 'certificates.k8s.io' &&
    target.resource === 'certificatesigningrequests';
  return approval ? { ...target, subresource: 'status' } : target;
}

function verbAllowed(resource: ApiResource, verb: string): void {
  if (!resource.verbs.includes(verb)) throw methodNotSupported(resource.group, resource.plural, verb);
}

/**
 * Serves a request to a REST resource: GET (get, list, watch — `?watch=1|true` or a name with
 * `watch`), POST (create), PUT (update), PATCH, DELETE (one object or the collection), and the
 * `status` and `scale` subresources. Namespaced resources are listed and watched across
 * namespaces at the cluster path; everything else needs the namespace.
 */
export async function dispatchResource(
  server: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  requested: ResourceTarget,
  query: URLSearchParams,
): Promise<void> {
  const target = csrApprovalAsStatus(requested);
  const resource = resolve(server, target);
  const ctx: RequestContext = {
    server,
    req,
    res,
    target,
    resource,
    query,
    pretty: queryBool(query, 'pretty') === true,
    warnings: [],
    ...fenceEntry(requestFence(req)),
  };
  const { name, subresource } = target;
  const clusterPath = resource.namespaced && target.namespace === '';
  const method = req.method ?? 'GET';
  if (target.watchPath === true) {
    // `…/watch/…` (deprecated): GET only, always a watch; with a name, of that object
    if (method !== 'GET') throw methodNotAllowed();
    if (name !== undefined && clusterPath) throw unknownResource();
    verbAllowed(resource, 'watch');
    const watchQuery = new URLSearchParams(query);
    watchQuery.set('watch', 'true');
    await handleWatch(ctx, parseListQuery(watchQuery), name);
    return;
  }
  if (
    subresource !== undefined &&
    name !== undefined &&
    isPodSubresource(target.group, target.resource, subresource)
  ) {
    await handlePodSubresource(ctx, name, subresource);
    return;
  }
  if (subresource === 'token' && name !== undefined && target.resource === 'serviceaccounts') {
    await handleTokenRequest(ctx, name);
    return;
  }
  if (target.group === '' && target.resource === 'bindings') {
    await handleLegacyBinding(ctx);
    return;
  }
  if (isReview(ctx)) {
    if (method !== 'POST' || name !== undefined || subresource !== undefined) throw methodNotAllowed();
    if (clusterPath) throw methodNotAllowed();
    await handleReview(ctx);
    return;
  }
  if (subresource === 'scale' && name !== undefined && ['GET', 'PUT', 'PATCH'].includes(method)) {
    verbAllowed(resource, method === 'GET' ? 'get' : method === 'PUT' ? 'update' : 'patch');
    await handleScale(ctx, name, method);
    return;
  }
  switch (method) {
    case 'GET':
    case 'HEAD': {
      if (name !== undefined && queryBool(query, 'watch') !== true) {
        verbAllowed(resource, 'get');
        await handleGet(ctx, name);
        return;
      }
      const listQuery = parseListQuery(query);
      verbAllowed(resource, listQuery.watch || name !== undefined ? 'watch' : 'list');
      if (listQuery.watch || name !== undefined) await handleWatch(ctx, listQuery, name);
      else await handleList(ctx);
      return;
    }
    case 'POST':
      if (name !== undefined || clusterPath) throw methodNotAllowed();
      verbAllowed(resource, 'create');
      await handleCreate(ctx);
      return;
    case 'PUT':
      if (name === undefined) throw methodNotAllowed();
      verbAllowed(resource, 'update');
      await handleUpdate(ctx, name);
      return;
    case 'PATCH':
      if (name === undefined) throw methodNotAllowed();
      verbAllowed(resource, 'patch');
      await handlePatch(ctx, name);
      return;
    case 'DELETE':
      if (subresource !== undefined || (name === undefined && clusterPath)) throw methodNotAllowed();
      verbAllowed(resource, name === undefined ? 'deletecollection' : 'delete');
      if (name === undefined) await handleDeleteCollection(ctx);
      else await handleDelete(ctx, name);
      return;
    default:
      throw methodNotAllowed();
  }
}
