import type { KubeObject, StatusCause } from '@converge/runtime';
import type { JsonObject, MutableObject } from './api-resource.ts';
import { type RequestContext, strategyContext } from './context.ts';
import { invalidObject } from './field-causes.ts';
import { toResponse } from './object-io.ts';
import type { WriteQuery } from './query.ts';

/** Records the writer's field ownership in `metadata.managedFields` (non-apply writes). */
async function recordManagedFields(
  ctx: RequestContext,
  object: MutableObject,
  old: KubeObject | undefined,
  write: WriteQuery,
  subresource: string | undefined,
): Promise<void> {
  const record = ctx.server.extensions.recordManagedFields;
  if (record === undefined || write.apply) return;
  // The hook only reads the stored object (see PatchHooks): it is passed as it is, not deep-copied.
  const live = old === undefined ? undefined : ((await toResponse(ctx.resource, old)) as JsonObject);
  const managed = record(live, object, {
    resource: ctx.resource,
    fieldManager: write.fieldManager,
    force: false,
    subresource,
    now: () => ctx.server.clock.now(),
  });
  if (managed.length === 0) delete object.metadata.managedFields;
  else object.metadata.managedFields = [...managed];
}

function fail(ctx: RequestContext, object: MutableObject, causes: readonly StatusCause[] | undefined): void {
  if (causes === undefined || causes.length === 0) return;
  const { resource } = ctx;
  const name = typeof object.metadata.name === 'string' ? object.metadata.name : '';
  throw invalidObject(resource.kind, resource.group, name, causes);
}

/** Adds a `Warning:` header to the response (ratcheted rule failures). */
function warn(ctx: RequestContext): (text: string) => void {
  return (text) => {
    if (!ctx.warnings.includes(text)) ctx.warnings.push(text);
  };
}

/** The stored object in the version of the request (what `oldSelf` of a transition rule sees). */
async function asServed(ctx: RequestContext, old: KubeObject): Promise<KubeObject> {
  return (await toResponse(ctx.resource, old)) as KubeObject;
}

function isCrd(ctx: RequestContext): boolean {
  return ctx.resource.kind === 'CustomResourceDefinition' && ctx.resource.group === 'apiextensions.k8s.io';
}

/**
 * The strategy's causes, or — for CustomResourceDefinitions when the CRD module is installed — the
 * module's full validation instead of the server's basic checks.
 */
function strategyCauses(
  ctx: RequestContext,
  object: MutableObject,
  own: readonly StatusCause[] | undefined,
  old?: KubeObject,
): StatusCause[] {
  const validateCrd = ctx.server.extensions.validateCrd;
  if (isCrd(ctx) && validateCrd !== undefined) return [...validateCrd(object, old)];
  return [...(own ?? [])];
}

/** Runs the create strategy and, for custom resources, defaulting and schema validation; 422 on causes. */
export async function prepareCreate(
  ctx: RequestContext,
  object: MutableObject,
  write: WriteQuery,
): Promise<void> {
  const { resource, server } = ctx;
  const crd = resource.crd;
  if (crd !== undefined) server.extensions.applyDefaults?.(crd, resource.version, object);
  const own = resource.strategy.prepareForCreate?.(object, strategyContext(ctx, write.fieldValidation));
  const causes = strategyCauses(ctx, object, own);
  if (crd !== undefined) {
    causes.push(
      ...(server.extensions.validateCustomResource?.(crd, resource.version, object, undefined, warn(ctx)) ??
        []),
    );
  }
  fail(ctx, object, causes);
  await recordManagedFields(ctx, object, undefined, write, undefined);
}

/** Runs the update strategy (and custom resource defaulting/validation) against the stored object. */
export async function prepareUpdate(
  ctx: RequestContext,
  object: MutableObject,
  old: KubeObject,
  write: WriteQuery,
): Promise<void> {
  const { resource, server } = ctx;
  const crd = resource.crd;
  if (crd !== undefined) server.extensions.applyDefaults?.(crd, resource.version, object);
  const own = resource.strategy.prepareForUpdate?.(object, old, strategyContext(ctx, write.fieldValidation));
  const causes = strategyCauses(ctx, object, own, old);
  if (crd !== undefined) {
    causes.push(
      ...(server.extensions.validateCustomResource?.(
        crd,
        resource.version,
        object,
        await asServed(ctx, old),
        warn(ctx),
      ) ?? []),
    );
  }
  fail(ctx, object, causes);
  await recordManagedFields(ctx, object, old, write, undefined);
}

/** Validates a status write of a custom resource against its schema. */
export async function prepareStatus(
  ctx: RequestContext,
  object: MutableObject,
  old: KubeObject,
  write: WriteQuery,
): Promise<void> {
  const { resource, server } = ctx;
  const causes = [...(resource.strategy.validateStatus?.(object, old) ?? [])];
  const crd = resource.crd;
  if (crd !== undefined) {
    server.extensions.applyDefaults?.(crd, resource.version, object);
    const served = await asServed(ctx, old);
    const { validateCustomResourceStatus, validateCustomResource } = server.extensions;
    const found =
      validateCustomResourceStatus !== undefined
        ? validateCustomResourceStatus(crd, resource.version, object, served, warn(ctx))
        : validateCustomResource?.(crd, resource.version, object, served, warn(ctx));
    causes.push(...(found ?? []));
  }
  fail(ctx, object, causes);
  await recordManagedFields(ctx, object, old, write, 'status');
}

/**
 * Validates a custom resource whose replicas a `/scale` write changed, as kube-apiserver does: the
 * whole object against its schema and its `x-kubernetes-validations` rules (with `oldSelf`).
 */
export async function prepareScale(
  ctx: RequestContext,
  object: MutableObject,
  old: KubeObject,
): Promise<void> {
  const { resource, server } = ctx;
  const crd = resource.crd;
  if (crd === undefined) return;
  const served = await asServed(ctx, old);
  fail(
    ctx,
    object,
    server.extensions.validateCustomResource?.(crd, resource.version, object, served, warn(ctx)),
  );
}
