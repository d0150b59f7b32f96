import type { KubeObject } from '@converge/runtime';
import type { AdmissionAttributes, UserInfo } from '../admission/index.ts';
import type { JsonObject, MutableObject } from './api-resource.ts';
import { requestUser } from './auth.ts';
import { type UserInfo as AuthenticatedUser, authorize } from './authorize.ts';
import type { RequestContext } from './context.ts';
import { equivalentsOf } from './conversion-admission.ts';
import { toResponse } from './object-io.ts';
import { confirmNoEscalation } from './rbac-escalation.ts';
import { warningHeaders } from './respond.ts';

/**
 * The user who made the request (after impersonation), as AdmissionReview's `request.userInfo`
 * carries it: `authentication.k8s.io/v1` UserInfo, its empty fields left out (omitempty).
 */
function admissionUser(user: AuthenticatedUser): UserInfo {
  return {
    username: user.username,
    ...(user.uid === undefined || user.uid === '' ? {} : { uid: user.uid }),
    ...(user.groups.length === 0 ? {} : { groups: [...user.groups] }),
    ...(user.extra === undefined || Object.keys(user.extra).length === 0 ? {} : { extra: user.extra }),
  };
}

const OPTIONS_KIND: Readonly<Record<string, string>> = {
  POST: 'CreateOptions',
  PUT: 'UpdateOptions',
  PATCH: 'PatchOptions',
  DELETE: 'DeleteOptions',
};

/** The autoscaling/v1 Scale kind admission sees on the `scale` subresource. */
const SCALE_KIND = { group: 'autoscaling', version: 'v1', kind: 'Scale' } as const;

/** Whether this write is to `/scale`: handle-scale admits the Scale objects itself. */
function isScale(ctx: RequestContext): boolean {
  return ctx.target.subresource === 'scale';
}

/** What admission sees of a write: the request's resource and version, objects as served. */
async function attributesOf(
  ctx: RequestContext,
  operation: AdmissionAttributes['operation'],
  object: MutableObject | null,
  old: KubeObject | JsonObject | undefined,
  dryRun: boolean,
  fieldManager: string | undefined,
): Promise<AdmissionAttributes> {
  const { resource, target } = ctx;
  const meta = (object ?? old)?.metadata as { name?: unknown; namespace?: unknown } | undefined;
  const kind = OPTIONS_KIND[ctx.req.method ?? 'POST'] ?? 'CreateOptions';
  const scale = isScale(ctx);
  return {
    operation,
    kind: scale ? SCALE_KIND : { group: resource.group, version: resource.version, kind: resource.kind },
    resource: { group: resource.group, version: resource.version, resource: resource.plural },
    subResource: target.subresource ?? '',
    namespaced: resource.namespaced,
    namespace: resource.namespaced ? String(target.namespace || (meta?.namespace ?? '')) : '',
    name: String(meta?.name ?? target.name ?? ''),
    object: object as JsonObject | null,
    oldObject:
      old === undefined
        ? null
        : scale
          ? (old as JsonObject)
          : ((await toResponse(resource, old as KubeObject)) as JsonObject),
    dryRun,
    options: {
      kind,
      apiVersion: 'meta.k8s.io/v1',
      ...(dryRun ? { dryRun: ['All'] } : {}),
      ...(fieldManager === undefined || kind === 'DeleteOptions' ? {} : { fieldManager }),
    },
    userInfo: admissionUser(requestUser(ctx.req)),
    authorize: (user, check) => authorize({ ...user, groups: user.groups ?? [] }, check, ctx.server.rbac),
    ...equivalentsOf(ctx),
  };
}

/** Warnings collected so far travel with an error response too (kubectl prints them). */
async function keepingWarnings<T>(ctx: RequestContext, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (ctx.warnings.length > 0 && !ctx.res.headersSent)
      ctx.res.setHeader('Warning', warningHeaders(ctx.warnings));
    throw error;
  }
}

function warn(ctx: RequestContext): (text: string) => void {
  return (text) => {
    ctx.warnings.push(text);
  };
}

/**
 * Mutating admission of a write: `object` with the patches of the matching mutating webhooks
 * applied in place (DELETE passes `object: null`; webhooks are called, patches ignored). A no-op
 * when the server has no admission.
 */
export async function admitMutating(
  ctx: RequestContext,
  operation: AdmissionAttributes['operation'],
  object: MutableObject | null,
  old: KubeObject | undefined,
  write: { readonly dryRun: boolean; readonly fieldManager?: string },
): Promise<void> {
  const admission = ctx.server.admission;
  if (admission === undefined || isScale(ctx)) return;
  const crd = ctx.resource.crd;
  // webhooks see the object as decoded, with its schema defaults (defaulted again after them)
  if (crd !== undefined && object !== null)
    ctx.server.extensions.applyDefaults?.(crd, ctx.resource.version, object);
  const attributes = await attributesOf(ctx, operation, object, old, write.dryRun, write.fieldManager);
  const result = await keepingWarnings(ctx, () => admission.mutate(attributes, warn(ctx)));
  if (result === null || object === null || result === object) return;
  const target = object as JsonObject;
  for (const key of Object.keys(target)) delete target[key];
  for (const [key, value] of Object.entries(result)) {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  }
}

/**
 * Validating admission of a write (after schema validation): ValidatingAdmissionPolicies, then
 * validating webhooks, as kube-apiserver orders them. DELETE passes `object: null`.
 */
export async function admitValidating(
  ctx: RequestContext,
  operation: AdmissionAttributes['operation'],
  object: MutableObject | null,
  old: KubeObject | undefined,
  write: { readonly dryRun: boolean; readonly fieldManager?: string },
): Promise<void> {
  if (isScale(ctx)) return;
  // RBAC's escalation check runs where kube-apiserver's policy-based RBAC storage does: before validation admission
  if (object !== null && operation !== 'DELETE') confirmNoEscalation(ctx, object as JsonObject);
  await validating(ctx, await attributesOf(ctx, operation, object, old, write.dryRun, write.fieldManager));
}

async function validating(ctx: RequestContext, attributes: AdmissionAttributes): Promise<void> {
  const { admission, policies } = ctx.server;
  if (admission === undefined && policies === undefined) return;
  await keepingWarnings(ctx, async () => {
    await policies?.validate(attributes, warn(ctx));
    await admission?.validate(attributes, warn(ctx));
  });
}

/**
 * Admission of a `/scale` write, as kube-apiserver admits it: the autoscaling/v1 Scale objects as
 * `object` and `oldObject`, kind `autoscaling/v1 Scale`, the parent's resource with subresource
 * `scale`. `mutating` runs the mutating webhooks and resolves with the Scale to write;
 * `validating` runs policies and validating webhooks.
 */
export async function admitScale(
  ctx: RequestContext,
  phase: 'mutating' | 'validating',
  scale: JsonObject,
  oldScale: JsonObject,
  write: { readonly dryRun: boolean; readonly fieldManager?: string },
): Promise<JsonObject> {
  const attributes = await attributesOf(
    ctx,
    'UPDATE',
    scale as MutableObject,
    oldScale,
    write.dryRun,
    write.fieldManager,
  );
  if (phase === 'validating') {
    await validating(ctx, attributes);
    return scale;
  }
  const admission = ctx.server.admission;
  if (admission === undefined) return scale;
  return (await keepingWarnings(ctx, () => admission.mutate(attributes, warn(ctx)))) ?? scale;
}

/**
 * A write to a webhook configuration or an admission policy changes admission: forget its caches.
 * A stored RBAC object (`stored`, from a create or update) takes effect for authorization at once.
 */
export function noteWrite(ctx: RequestContext, stored?: KubeObject): void {
  if (stored !== undefined) ctx.server.rbac?.written(ctx.resource.group, ctx.resource.kind, stored);
  if (ctx.resource.group !== 'admissionregistration.k8s.io') return;
  ctx.server.admission?.invalidate();
  ctx.server.policies?.invalidate();
}
