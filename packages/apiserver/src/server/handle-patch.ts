import {
  applyJsonPatch,
  applyMergePatch,
  BadRequestError,
  isConflict,
  isNotFound,
  type JsonPatchOperation,
  type KubeObject,
} from '@converge/runtime';
import type { JsonObject, MutableObject } from './api-resource.ts';
import { parseJson, readBody, requireObject } from './body.ts';
import type { RequestContext } from './context.ts';
import { unsupportedMediaType } from './errors.ts';
import type { PatchContext } from './extensions.ts';
import { createObject } from './handle-create.ts';
import { getStored, updateObject } from './handle-update.ts';
import { checkValueDepth, LIMITS, tooManyPatchOperations } from './limits.ts';
import { parseMediaType } from './media.ts';
import { checkIdentity, fromStorage, toResponse } from './object-io.ts';
import { parseWriteQuery, type WriteQuery } from './query.ts';
import { writeValue } from './respond.ts';
import { yieldBetweenStages } from './stage-yield.ts';
import { handleUnknownFields } from './unknown-fields.ts';
import { decodeYaml } from './yaml-decode.ts';

type PatchKind = 'json' | 'merge' | 'strategic' | 'apply';

const MEDIA: Readonly<Record<string, PatchKind>> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
};

/** How many times a patch is re-applied when the object changed under it (GuaranteedUpdate). */
const ATTEMPTS = 5;

/** The patch type of a request, or the 415 kube-apiserver answers for an unsupported one. */
function patchKind(ctx: RequestContext): PatchKind {
  const type = parseMediaType(ctx.req.headers['content-type'] ?? '')?.type ?? '';
  const kind = MEDIA[type];
  const { extensions } = ctx.server;
  const smp = ctx.resource.strategicMergePatch && extensions.applyStrategicMergePatch !== undefined;
  const supported =
    kind === 'json' ||
    kind === 'merge' ||
    (kind === 'strategic' && smp) ||
    (kind === 'apply' && extensions.serverSideApply !== undefined);
  if (kind === undefined || !supported) {
    const accepted = [
      'application/json-patch+json',
      'application/merge-patch+json',
      'application/apply-patch+yaml',
    ];
    if (smp) accepted.push('application/strategic-merge-patch+json');
    throw unsupportedMediaType(accepted);
  }
  return kind;
}

function patchContext(ctx: RequestContext, write: WriteQuery): PatchContext {
  return {
    resource: ctx.resource,
    fieldManager: write.fieldManager,
    force: write.force === true,
    subresource: ctx.target.subresource,
    now: () => ctx.server.clock.now(),
  };
}

/** Applies a merge, JSON or strategic merge patch to the served object; returns the patched object. */
function applyPatch(
  ctx: RequestContext,
  kind: PatchKind,
  current: MutableObject,
  patch: unknown,
  write: WriteQuery,
): JsonObject {
  switch (kind) {
    case 'merge':
      return requireObject(applyMergePatch(current, patch));
    case 'json':
      if (!Array.isArray(patch))
        throw new BadRequestError('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
      return requireObject(
        applyJsonPatch(current, patch as JsonPatchOperation[], {
          maxOperations: LIMITS.maxJsonPatchOperations,
          maxCopyBytes: LIMITS.maxJsonPatchCopyBytes,
        }),
      );
    case 'strategic':
      return (
        ctx.server.extensions.applyStrategicMergePatch as NonNullable<
          typeof ctx.server.extensions.applyStrategicMergePatch
        >
      )(current, patch, patchContext(ctx, write));
    case 'apply':
      throw new BadRequestError('apply patches are applied by serverSideApply');
  }
}

/** The patched object must keep its identity: kind, apiVersion, name and namespace. */
function checkPatched(
  ctx: RequestContext,
  patched: JsonObject,
  current: MutableObject,
  name: string,
): MutableObject {
  const object = checkIdentity(ctx, patched, name);
  const meta = object.metadata;
  if ((meta.namespace ?? '') !== (current.metadata.namespace ?? '')) {
    throw new BadRequestError(
      'the namespace of the provided object does not match the namespace sent on the request',
    );
  }
  return object;
}

async function applyServerSide(
  ctx: RequestContext,
  name: string,
  body: Buffer,
  write: WriteQuery,
): Promise<void> {
  const apply = ctx.server.extensions.serverSideApply;
  if (apply === undefined)
    throw unsupportedMediaType(['application/json-patch+json', 'application/merge-patch+json']);
  const applied = checkIdentity(ctx, requireObject(await decodeYaml(body.toString('utf8'))), name);
  for (let attempt = 1; ; attempt++) {
    await yieldBetweenStages(ctx.req);
    let current: KubeObject | undefined;
    try {
      current = await getStored(ctx, name);
    } catch (error) {
      if (!isNotFound(error) || ctx.target.subresource !== undefined) throw error;
    }
    // Apply reads the stored object and the configuration and changes neither (see PatchHooks):
    // no deep copy of either, which would cost as much as the apply itself for a large object.
    const view =
      current === undefined ? undefined : ((await toResponse(ctx.resource, current)) as JsonObject);
    const result = checkIdentity(ctx, apply(view, applied, patchContext(ctx, write)), name);
    handleUnknownFields(ctx.resource, result, write.fieldValidation, ctx.server.extensions, (w) =>
      ctx.warnings.push(w),
    );
    try {
      // Safe to yield: the write below is conditional (the resourceVersion, or a create), and a
      // conflict with a write that came meanwhile is retried.
      await yieldBetweenStages(ctx.req);
      if (current === undefined) {
        const created = await createObject(ctx, result, write);
        await yieldBetweenStages(ctx.req);
        writeValue(
          ctx.res,
          201,
          await toResponse(ctx.resource, created),
          { pretty: ctx.pretty },
          ctx.warnings,
        );
        return;
      }
      result.metadata.resourceVersion ??= current.metadata.resourceVersion;
      const sub = ctx.target.subresource === 'status' ? 'status' : undefined;
      const stored = await updateObject(ctx, result, current, write, sub);
      await yieldBetweenStages(ctx.req);
      writeValue(ctx.res, 200, await toResponse(ctx.resource, stored), { pretty: ctx.pretty }, ctx.warnings);
      return;
    } catch (error) {
      if (
        attempt >= ATTEMPTS ||
        !(isConflict(error) || (current === undefined && isAlreadyExistsLike(error)))
      )
        throw error;
    }
  }
}

function isAlreadyExistsLike(error: unknown): boolean {
  return (error as { reason?: unknown } | null)?.reason === 'AlreadyExists';
}

/**
 * PATCH: JSON merge patch and JSON patch always; strategic merge patch for built-in kinds and
 * server-side apply when the patch module is installed (415 otherwise, as for custom resources).
 * The patch is applied to the current object, then the normal update pipeline runs with the
 * current resourceVersion as precondition — re-applied when the object changed meanwhile, unless
 * the patch itself set a resourceVersion (then that is the precondition: 409 if stale).
 */
export async function handlePatch(ctx: RequestContext, name: string): Promise<void> {
  const kind = patchKind(ctx);
  const write = parseWriteQuery(ctx.query, 'PatchOptions', ctx.req.headers['user-agent'], kind === 'apply');
  const body = await readBody(ctx.req);
  if (kind === 'apply') {
    await applyServerSide(ctx, name, body, write);
    return;
  }
  const patch = parseJson(body.toString('utf8'));
  if (kind === 'json' && Array.isArray(patch) && patch.length > LIMITS.maxJsonPatchOperations) {
    throw tooManyPatchOperations(patch.length);
  }
  const subresource = ctx.target.subresource === 'status' ? 'status' : undefined;
  for (let attempt = 1; ; attempt++) {
    const current = await getStored(ctx, name);
    const view = await fromStorage(ctx.resource, current);
    const patched = applyPatch(ctx, kind, view, patch, write);
    // A patch can build what no body could carry (copies nest the document in itself).
    checkValueDepth(patched, 'patch result');
    const object = checkPatched(ctx, patched, view, name);
    const rv = object.metadata.resourceVersion;
    const explicit = rv !== undefined && rv !== null && rv !== '' && rv !== current.metadata.resourceVersion;
    if (rv === undefined || rv === null || rv === '')
      object.metadata.resourceVersion = current.metadata.resourceVersion;
    handleUnknownFields(ctx.resource, object, write.fieldValidation, ctx.server.extensions, (w) =>
      ctx.warnings.push(w),
    );
    try {
      const stored = await updateObject(ctx, object, current, write, subresource);
      writeValue(ctx.res, 200, await toResponse(ctx.resource, stored), { pretty: ctx.pretty }, ctx.warnings);
      return;
    } catch (error) {
      if (explicit || attempt >= ATTEMPTS || !isConflict(error)) throw error;
    }
  }
}
