import {
  applyJsonPatch,
  applyMergePatch,
  BadRequestError,
  type KubeObject,
  type ObjectKey,
  type Patch,
  type PatchOptions,
  UnsupportedError,
} from '@converge/runtime';
import { toDraft } from '@converge/store';
import type { TypeBucket } from './bucket.ts';
import type { BackendContext } from './context.ts';
import { modifyObject } from './writes.ts';

/** The apiserver's answer to a patch type a resource does not accept (415), as the store gives it. */
const UNSUPPORTED_PATCH =
  'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json';

/** Whether a patch names a resourceVersion itself (then it is a precondition, as in Kubernetes). */
function namesResourceVersion(patch: Patch): boolean {
  if (patch.type === 'json') {
    return patch.patch.some((op) => op.path === '/metadata/resourceVersion' || op.path === '/metadata');
  }
  const metadata = (patch.patch as { metadata?: unknown } | null)?.metadata;
  return typeof metadata === 'object' && metadata !== null && 'resourceVersion' in metadata;
}

/**
 * Patches an object as the store does: a JSON merge patch (RFC 7386) or JSON patch (RFC 6902) on the
 * current state, then the update pipeline (the main resource ignores `.status` with a status
 * subresource; `subresource: 'status'` changes only `.status`). A resourceVersion in the patch is a
 * precondition; without one a concurrent write makes the patch apply again to the new state.
 * Strategic merge patch and server-side apply are {@link UnsupportedError}s, as in the store (these
 * objects have no Go struct tags to merge lists by).
 */
export async function patchObject(
  ctx: BackendContext,
  bucket: TypeBucket,
  objectKey: ObjectKey,
  patch: Patch,
  options: PatchOptions,
): Promise<KubeObject> {
  if (typeof patch !== 'object' || patch === null) throw new BadRequestError('the patch must be an object');
  const kind = (patch as { type?: unknown }).type;
  if (kind === 'strategic') throw new UnsupportedError(UNSUPPORTED_PATCH);
  if (kind === 'apply')
    throw new UnsupportedError(`${UNSUPPORTED_PATCH} (server-side apply is not supported)`);
  if (kind !== 'merge' && kind !== 'json')
    throw new BadRequestError(`unknown patch type ${JSON.stringify(kind)}`);
  if (kind === 'json' && !Array.isArray(patch.patch)) {
    throw new BadRequestError('a JSON patch must be an array of operations');
  }
  if (options.subresource !== undefined && options.subresource !== 'status') {
    throw new BadRequestError(`unknown subresource ${JSON.stringify(options.subresource)}`);
  }
  const explicit = namesResourceVersion(patch);
  const apply =
    patch.type === 'merge'
      ? (prev: KubeObject) => applyMergePatch(prev, patch.patch)
      : (prev: KubeObject) => applyJsonPatch(prev, patch.patch as Extract<Patch, { type: 'json' }>['patch']);
  return await modifyObject(ctx, bucket, objectKey, {
    mode: options.subresource === 'status' ? 'status' : 'main',
    requireResourceVersion: false,
    dryRun: options.dryRun === true,
    fence: options.fence,
    build: (prev) => {
      const draft = toDraft(bucket.type, apply(prev));
      const rv = (draft.metadata as { resourceVersion?: string }).resourceVersion ?? '';
      const precondition = explicit || rv !== prev.metadata.resourceVersion ? rv : undefined;
      return { draft, precondition: precondition === '' ? undefined : precondition };
    },
  });
}
