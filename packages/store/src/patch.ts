import {
  applyJsonPatch,
  applyMergePatch,
  BadRequestError,
  type KubeObject,
  type Patch,
  type PatchOptions,
  UnsupportedError,
} from '@converge/runtime';
import type { ServedType, StoreCore } from './core.ts';
import { toDraft } from './draft.ts';
import { notFound } from './errors.ts';
import { updateObject } from './update.ts';

/** The apiserver's answer to a patch type a resource does not accept (415). */
const UNSUPPORTED_PATCH =
  'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json';

/**
 * Patches an object: a JSON merge patch (RFC 7386) or JSON patch (RFC 6902) applied to the current
 * state, then the normal update pipeline (a resourceVersion in the result is a precondition, the
 * update or status strategy, validation, no-op detection, finalizer removal). Strategic merge patch
 * and server-side apply are UnsupportedErrors.
 */
export function patchObject(
  core: StoreCore,
  td: ServedType,
  key: string,
  name: string,
  patch: Patch,
  options: PatchOptions,
): KubeObject {
  if (typeof patch !== 'object' || patch === null) throw new BadRequestError('the patch must be an object');
  const kind = (patch as { type?: unknown }).type;
  if (kind === 'strategic') throw new UnsupportedError(UNSUPPORTED_PATCH);
  if (kind === 'apply')
    throw new UnsupportedError(`${UNSUPPORTED_PATCH} (server-side apply is not supported yet)`);
  if (kind !== 'merge' && kind !== 'json')
    throw new BadRequestError(`unknown patch type ${JSON.stringify(kind)}`);
  if (options.subresource !== undefined && options.subresource !== 'status') {
    throw new BadRequestError(`unknown subresource ${JSON.stringify(options.subresource)}`);
  }
  const current = td.latest(key);
  if (current === undefined) throw notFound(td.type, name);
  const patched =
    kind === 'merge' ? applyMergePatch(current, patch.patch) : applyJsonPatch(current, patch.patch as never);
  const draft = toDraft(td.type, patched);
  return updateObject(core, td, draft, {
    mode: options.subresource === 'status' ? 'status' : 'main',
    requireResourceVersion: false,
    key,
    dryRun: options.dryRun === true,
  });
}
