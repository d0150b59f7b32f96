import type { KubeObject } from '@converge/runtime';
import { admitMutating, admitValidating, noteWrite } from './admit.ts';
import type { MutableObject } from './api-resource.ts';
import { fenceOption, type RequestContext } from './context.ts';
import { checkStoredObjectSize } from './limits.ts';
import { checkIdentity, readObjectBody, toResponse, toStorage } from './object-io.ts';
import { admitPodBuiltins } from './pod-admission.ts';
import { parseWriteQuery, type WriteQuery } from './query.ts';
import { writeValue } from './respond.ts';
import { yieldBetweenStages } from './stage-yield.ts';
import { handleUnknownFields } from './unknown-fields.ts';
import { prepareCreate } from './write-strategy.ts';

/** Whether a resource is apiextensions.k8s.io CustomResourceDefinition. */
export function isCrdResource(ctx: RequestContext): boolean {
  return ctx.resource.group === 'apiextensions.k8s.io' && ctx.resource.kind === 'CustomResourceDefinition';
}

/** Namespace lifecycle admission: creating in a missing namespace is a 404 `namespaces "x" not found`. */
async function requireNamespace(ctx: RequestContext, namespace: string): Promise<void> {
  if (!ctx.resource.namespaced) return;
  await ctx.server.store.get(ctx.server.namespaceType, { namespace: '', name: namespace });
}

const MAX_UINT64 = 2n ** 64n - 1n;

/**
 * A resourceVersion on a create body, as kube-apiserver's storage treats it: one that parses as a
 * non-zero unsigned 64-bit integer is refused (the store's upstream 500 `resourceVersion should
 * not be set on objects to be created`); anything else — `"abc"`, `"-1"`, `"0"` — fails to parse,
 * so upstream skips the check and clears it (`PrepareObjectForStorage`): the create succeeds.
 */
function clearUnparsableResourceVersion(object: MutableObject): void {
  const rv = object.metadata.resourceVersion;
  if (typeof rv !== 'string' || rv === '') return;
  const parsed = /^[0-9]+$/.test(rv) ? BigInt(rv) : undefined;
  if (parsed === undefined || parsed === 0n || parsed > MAX_UINT64) delete object.metadata.resourceVersion;
}

/**
 * Creates a checked, decoded object: namespace admission, mutating admission webhooks, the create
 * strategy (defaults, validation), validating admission webhooks, then the store (which sets uid,
 * timestamps, generation and resourceVersion and reports AlreadyExists). A created CRD is reconciled before this resolves, so its resources are
 * served when the client's next request arrives.
 */
export async function createObject(
  ctx: RequestContext,
  object: MutableObject,
  write: WriteQuery,
): Promise<KubeObject> {
  const { resource, server } = ctx;
  await requireNamespace(ctx, String(object.metadata.namespace ?? ''));
  clearUnparsableResourceVersion(object);
  await admitPodBuiltins(ctx, object, undefined);
  await admitMutating(ctx, 'CREATE', object, undefined, write);
  await yieldBetweenStages(ctx.req);
  await prepareCreate(ctx, object, write);
  await yieldBetweenStages(ctx.req);
  await admitValidating(ctx, 'CREATE', object, undefined, write);
  const storage = await toStorage(resource, object);
  checkStoredObjectSize(resource.storage, storage, true);
  await yieldBetweenStages(ctx.req);
  const stored = await server.store.create(resource.storage, storage, {
    dryRun: write.dryRun,
    fieldManager: write.fieldManager,
    ...fenceOption(ctx),
  });
  if (!write.dryRun) noteWrite(ctx, stored);
  if (isCrdResource(ctx) && !write.dryRun) await server.crds.reconcile(stored.metadata.name ?? '');
  return stored;
}

/** POST: create (201 with the object as stored; with dryRun=All, as it would be stored). */
export async function handleCreate(ctx: RequestContext): Promise<void> {
  const write = parseWriteQuery(ctx.query, 'CreateOptions', ctx.req.headers['user-agent']);
  const object = checkIdentity(ctx, await readObjectBody(ctx));
  await yieldBetweenStages(ctx.req);
  handleUnknownFields(ctx.resource, object, write.fieldValidation, ctx.server.extensions, (w) =>
    ctx.warnings.push(w),
  );
  const stored = await createObject(ctx, object, write);
  await yieldBetweenStages(ctx.req);
  writeValue(ctx.res, 201, await toResponse(ctx.resource, stored), { pretty: ctx.pretty }, ctx.warnings);
}
