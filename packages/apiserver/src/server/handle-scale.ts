import {
  applyJsonPatch,
  applyMergePatch,
  BadRequestError,
  isConflict,
  type JsonPatchOperation,
  type KubeObject,
} from '@converge/runtime';
import { admitScale } from './admit.ts';
import type { JsonObject, ScaleSpec } from './api-resource.ts';
import { parseJson, readBody, readBodyValue, requireObject } from './body.ts';
import type { RequestContext } from './context.ts';
import { unsupportedMediaType } from './errors.ts';
import { cause, invalidObject } from './field-causes.ts';
import { getStored, updateObject } from './handle-update.ts';
import { asObject, getPath, setPath } from './json-util.ts';
import { parseMediaType } from './media.ts';
import { fromStorage, servedObject } from './object-io.ts';
import { parseWriteQuery, type WriteQuery } from './query.ts';
import { writeValue } from './respond.ts';
import { prepareScale } from './write-strategy.ts';

/** A `LabelSelector` as a selector string (`app=web,tier in (a,b)`), requirements sorted by key. */
export function labelSelectorString(selector: unknown): string {
  const object = asObject(selector);
  if (object === undefined) return '';
  const parts: [string, string][] = [];
  for (const [key, value] of Object.entries(asObject(object.matchLabels) ?? {}))
    parts.push([key, `${key}=${String(value)}`]);
  for (const item of Array.isArray(object.matchExpressions) ? object.matchExpressions : []) {
    const expr = asObject(item);
    if (expr === undefined || typeof expr.key !== 'string') continue;
    const values = (Array.isArray(expr.values) ? expr.values.map(String) : []).sort().join(',');
    const text =
      expr.operator === 'In'
        ? `${expr.key} in (${values})`
        : expr.operator === 'NotIn'
          ? `${expr.key} notin (${values})`
          : expr.operator === 'DoesNotExist'
            ? `!${expr.key}`
            : expr.key;
    parts.push([expr.key, text]);
  }
  return parts
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, text]) => text)
    .join(',');
}

/** The autoscaling/v1 Scale of an object. */
function scaleOf(object: KubeObject, spec: ScaleSpec): JsonObject {
  const meta = object.metadata;
  const replicas = getPath(object, spec.specReplicasPath);
  const status: JsonObject = { replicas: getPath(object, spec.statusReplicasPath) ?? 0 };
  const selector =
    spec.selectorFromSpec === true
      ? labelSelectorString(
          spec.selectorIsMap === true
            ? { matchLabels: getPath(object, '.spec.selector') }
            : getPath(object, '.spec.selector'),
        )
      : spec.labelSelectorPath === undefined
        ? undefined
        : getPath(object, spec.labelSelectorPath);
  if (typeof selector === 'string' && selector !== '') status.selector = selector;
  const metadata: JsonObject = {
    name: meta.name,
    resourceVersion: meta.resourceVersion,
    uid: meta.uid,
    creationTimestamp: meta.creationTimestamp,
  };
  if (meta.namespace !== undefined) metadata.namespace = meta.namespace;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata,
    spec: { replicas: typeof replicas === 'number' ? replicas : 0 },
    status,
  };
}

function scaleSpec(ctx: RequestContext): ScaleSpec {
  return ctx.resource.scale as ScaleSpec;
}

/**
 * Writes a new replica count from a Scale (its resourceVersion, when set, is the precondition):
 * mutating admission of the Scale, its validation, validating admission, then the update.
 */
async function writeScale(
  ctx: RequestContext,
  name: string,
  scale: JsonObject,
  current: KubeObject,
  write: WriteQuery,
): Promise<KubeObject> {
  if (scale.kind !== undefined && scale.kind !== 'Scale')
    throw new BadRequestError(
      `the kind in the data (${String(scale.kind)}) does not match the expected kind (Scale)`,
    );
  // admission sees the Scale (autoscaling/v1) as kube-apiserver shows it to webhooks and policies
  const oldScale = scaleOf(await servedObject(ctx.resource, current), scaleSpec(ctx));
  scale = await admitScale(ctx, 'mutating', scale, oldScale, write);
  const replicas = asObject(scale.spec)?.replicas;
  if (typeof replicas !== 'number' || !Number.isSafeInteger(replicas) || replicas < 0) {
    throw invalidObject('Scale', 'autoscaling', name, [
      cause.invalid('spec.replicas', replicas ?? null, 'must be greater than or equal to 0'),
    ]);
  }
  await admitScale(ctx, 'validating', scale, oldScale, write);
  const object = await fromStorage(ctx.resource, current);
  setPath(object, scaleSpec(ctx).specReplicasPath, replicas);
  const rv = asObject(scale.metadata)?.resourceVersion;
  object.metadata.resourceVersion =
    typeof rv === 'string' && rv !== '' ? rv : current.metadata.resourceVersion;
  await prepareScale(ctx, object, current);
  return updateObject(ctx, object, current, write, undefined);
}

function jsonPatchArray(patch: unknown): JsonPatchOperation[] {
  if (!Array.isArray(patch))
    throw new BadRequestError('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  return patch as JsonPatchOperation[];
}

/** GET, PUT and PATCH (merge or JSON patch) of the `scale` subresource: an autoscaling/v1 Scale. */
export async function handleScale(ctx: RequestContext, name: string, method: string): Promise<void> {
  const spec = scaleSpec(ctx);
  if (method === 'GET') {
    const served = await servedObject(ctx.resource, await getStored(ctx, name));
    writeValue(ctx.res, 200, scaleOf(served, spec), { pretty: ctx.pretty });
    return;
  }
  const write = parseWriteQuery(
    ctx.query,
    method === 'PUT' ? 'UpdateOptions' : 'PatchOptions',
    ctx.req.headers['user-agent'],
  );
  if (method === 'PUT') {
    const scale = requireObject(await readBodyValue(ctx.req, undefined));
    const stored = await writeScale(ctx, name, scale, await getStored(ctx, name), write);
    writeValue(ctx.res, 200, scaleOf(await servedObject(ctx.resource, stored), spec), { pretty: ctx.pretty });
    return;
  }
  const type = parseMediaType(ctx.req.headers['content-type'] ?? '')?.type;
  if (
    type !== 'application/merge-patch+json' &&
    type !== 'application/json-patch+json' &&
    type !== 'application/strategic-merge-patch+json'
  ) {
    throw unsupportedMediaType([
      'application/json-patch+json',
      'application/merge-patch+json',
      'application/strategic-merge-patch+json',
    ]);
  }
  const patch = parseJson((await readBody(ctx.req)).toString('utf8'));
  for (let attempt = 1; ; attempt++) {
    const current = await getStored(ctx, name);
    const scale = scaleOf(await servedObject(ctx.resource, current), spec);
    const patched = requireObject(
      type === 'application/json-patch+json'
        ? applyJsonPatch(scale, jsonPatchArray(patch))
        : applyMergePatch(scale, patch),
    );
    try {
      const stored = await writeScale(ctx, name, patched, current, write);
      writeValue(ctx.res, 200, scaleOf(await servedObject(ctx.resource, stored), spec), {
        pretty: ctx.pretty,
      });
      return;
    } catch (error) {
      const explicit = asObject(patched.metadata)?.resourceVersion !== current.metadata.resourceVersion;
      if (explicit || attempt >= 5 || !isConflict(error)) throw error;
    }
  }
}
