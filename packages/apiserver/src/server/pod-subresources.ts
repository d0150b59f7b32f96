/**
 * Pod subresources of a cluster without kubelets, as kube-apiserver answers them
 * (`pkg/registry/core/pod/storage`, `pkg/registry/core/pod/rest`, `pod/strategy.go`):
 * `binding` assigns a node once (`spec.nodeName`, PodScheduled=True, the binding's annotations);
 * `log` of a pod without a node is a 204 No Content (`LogLocation` finds no location and
 * `StreamObject` has nothing to stream: not the 400 of exec); `exec`, `attach` and `portforward`
 * of such a pod are a 400 `pod NAME does not have a host assigned`. A pod that has a node would be
 * proxied to its kubelet — there is none, so those are a 400 too (see docs).
 */
import {
  BadRequestError,
  ConflictError,
  InternalError,
  type KubeObject,
  NotFoundError,
  type StatusCause,
} from '@converge/runtime';
import type { ApiResource, JsonObject, MutableObject, SubresourceInfo } from './api-resource.ts';
import { readBodyValue, requireObject } from './body.ts';
import type { RequestContext } from './context.ts';
import { methodNotAllowed } from './errors.ts';
import { cause, invalidObject } from './field-causes.ts';
import { getStored } from './handle-update.ts';
import { asObject, cloneJson } from './json-util.ts';
import { parseWriteQuery } from './query.ts';
import { writeValue } from './respond.ts';
import { BodyReader } from './review-body.ts';

/** The subresources of pods this file serves, and the methods each accepts (as upstream registers them). */
const POD_SUBRESOURCES: Readonly<Record<string, readonly string[]>> = {
  binding: ['POST'],
  log: ['GET'],
  exec: ['GET', 'POST'],
  attach: ['GET', 'POST'],
  portforward: ['GET', 'POST'],
};

/** The subresources of pods served here, as kube-apiserver 1.32's discovery lists them. */
export const POD_SUBRESOURCES_DISCOVERY: readonly SubresourceInfo[] = [
  { name: 'attach', kind: 'PodAttachOptions', verbs: ['create', 'get'] },
  { name: 'binding', kind: 'Binding', verbs: ['create'] },
  { name: 'exec', kind: 'PodExecOptions', verbs: ['create', 'get'] },
  { name: 'log', kind: 'Pod', verbs: ['get'] },
  { name: 'portforward', kind: 'PodPortForwardOptions', verbs: ['create', 'get'] },
];

/** `serviceaccounts/token` in discovery. */
export const SERVICE_ACCOUNT_SUBRESOURCES_DISCOVERY: readonly SubresourceInfo[] = [
  { name: 'token', group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest', verbs: ['create'] },
];

/** Whether `pods/<sub>` is served here. */
export function isPodSubresource(group: string, resource: string, subresource: string | undefined): boolean {
  return group === '' && resource === 'pods' && subresource !== undefined && subresource in POD_SUBRESOURCES;
}

function containerNames(pod: KubeObject): string[] {
  const spec = asObject((pod as unknown as JsonObject).spec) ?? {};
  const names: string[] = [];
  for (const list of ['initContainers', 'containers', 'ephemeralContainers']) {
    const items = spec[list];
    if (!Array.isArray(items)) continue;
    for (const c of items) {
      const name = asObject(c)?.name;
      if (typeof name === 'string') names.push(name);
    }
  }
  return names;
}

/** `validateContainer`: the container asked for, or the only one. */
function validateContainer(pod: KubeObject, container: string): void {
  const name = pod.metadata.name ?? '';
  const spec = asObject((pod as unknown as JsonObject).spec) ?? {};
  const containers = Array.isArray(spec.containers) ? spec.containers : [];
  if (container === '') {
    if (containers.length === 1) return;
    if (containers.length === 0)
      throw new BadRequestError(`a container name must be specified for pod ${name}`);
    throw new BadRequestError(
      `a container name must be specified for pod ${name}, choose one of: [${containerNames(pod).join(' ')}]`,
    );
  }
  if (!containerNames(pod).includes(container))
    throw new BadRequestError(`container ${container} is not valid for pod ${name}`);
}

function nodeName(pod: KubeObject): string {
  const value = asObject((pod as unknown as JsonObject).spec)?.nodeName;
  return typeof value === 'string' ? value : '';
}

/** Serves `pods/{binding,log,exec,attach,portforward}`. */
export async function handlePodSubresource(
  ctx: RequestContext,
  name: string,
  subresource: string,
): Promise<void> {
  const method = ctx.req.method ?? 'GET';
  if (!(POD_SUBRESOURCES[subresource] ?? []).includes(method)) throw methodNotAllowed();
  if (subresource === 'binding') {
    await bind(ctx, name);
    return;
  }
  if (subresource === 'log') validateLogOptions(ctx.query, name);
  const pod = await getStored(ctx, name);
  if (subresource !== 'portforward') validateContainer(pod, ctx.query.get('container') ?? '');
  if (nodeName(pod) === '') {
    if (subresource === 'log') {
      // LogLocation: no node yet → no location → StreamObject's 204 No Content
      noContent(ctx);
      return;
    }
    throw new BadRequestError(`pod ${name} does not have a host assigned`);
  }
  await noKubelet(ctx, nodeName(pod));
}

/** 204 No Content: what kube-apiserver writes for a stream with nothing to stream. */
function noContent(ctx: RequestContext): void {
  if (ctx.res.headersSent || ctx.res.destroyed) return;
  ctx.res.writeHead(204, { 'Cache-Control': 'no-cache, private' });
  ctx.res.end();
}

/**
 * A pod with a node: kube-apiserver looks the Node up (404 `nodes "n" not found` when it does
 * not exist) and dials its kubelet — there is none here, so that fails like an unreachable one.
 */
async function noKubelet(ctx: RequestContext, node: string): Promise<never> {
  const nodes = ctx.server.registry.lookup('', 'v1', 'nodes');
  const missing = new NotFoundError(`nodes ${JSON.stringify(node)} not found`, {
    details: { name: node, kind: 'nodes' },
  });
  if (nodes === undefined) throw missing;
  try {
    await ctx.server.store.get(nodes.storage, { namespace: '', name: node });
  } catch (error) {
    if (error instanceof NotFoundError) throw missing;
    throw error;
  }
  throw new InternalError(
    `error dialing backend: the embedded API server runs no kubelet for node ${JSON.stringify(node)}`,
  );
}

/** An int64 query parameter (absent: undefined; not a number: upstream's 400). */
function int64Param(query: URLSearchParams, key: string): number | undefined {
  const raw = query.get(key);
  if (raw === null) return undefined;
  if (!/^[+-]?[0-9]+$/.test(raw) || !Number.isSafeInteger(Number(raw)))
    throw new BadRequestError(`strconv.ParseInt: parsing ${JSON.stringify(raw)}: invalid syntax`);
  return Number(raw);
}

/** `ValidatePodLogOptions`: 422 `PodLogOptions "P" is invalid` before the pod is looked at. */
function validateLogOptions(query: URLSearchParams, name: string): void {
  const causes: StatusCause[] = [];
  const tailLines = int64Param(query, 'tailLines');
  const limitBytes = int64Param(query, 'limitBytes');
  const sinceSeconds = int64Param(query, 'sinceSeconds');
  if (tailLines !== undefined && tailLines < 0)
    causes.push(cause.invalid('tailLines', tailLines, 'must be greater than or equal to 0'));
  if (limitBytes !== undefined && limitBytes < 1)
    causes.push(cause.invalid('limitBytes', limitBytes, 'must be greater than 0'));
  if (sinceSeconds !== undefined && query.get('sinceTime') !== null)
    causes.push(cause.forbidden('', 'at most one of `sinceTime` or `sinceSeconds` may be specified'));
  else if (sinceSeconds !== undefined && sinceSeconds < 1)
    causes.push(cause.invalid('sinceSeconds', sinceSeconds, 'must be greater than 0'));
  if (causes.length > 0) throw invalidObject('PodLogOptions', '', name, causes);
}

function bindingCauses(target: JsonObject | undefined, read: BodyReader): StatusCause[] {
  const kind = read.string(target, 'kind', 'ObjectReference', 'target.kind');
  const node = read.string(target, 'name', 'ObjectReference', 'target.name');
  const causes: StatusCause[] = [];
  if (kind !== '' && kind !== 'Node')
    causes.push({
      field: 'target.kind',
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(kind)}: supported values: "Node"`,
    });
  if (node === '')
    causes.push({ field: 'target.name', reason: 'FieldValueRequired', message: 'Required value' });
  return causes;
}

/**
 * `POST /api/v1/namespaces/NS/bindings` (LegacyBindingREST, the Python client's
 * `create_namespaced_binding`): the pod named by the Binding, bound as `pods/binding` does.
 */
export async function handleLegacyBinding(ctx: RequestContext): Promise<void> {
  if (ctx.req.method !== 'POST' || ctx.target.name !== undefined) throw methodNotAllowed();
  const pods = ctx.server.registry.lookup('', 'v1', 'pods');
  if (pods === undefined) throw new NotFoundError('the server could not find the requested resource');
  await bind(ctx, undefined, pods);
}

/**
 * `BindingREST.Create`: 201 `Success`, or 409 on `pods/binding` when the pod cannot be bound.
 * `urlName` undefined: the legacy `bindings` collection, the pod named by the Binding.
 */
async function bind(
  ctx: RequestContext,
  urlName: string | undefined,
  pods: ApiResource = ctx.resource,
): Promise<void> {
  const write = parseWriteQuery(ctx.query, 'CreateOptions', ctx.req.headers['user-agent']);
  const decode = ctx.server.extensions.decodeProtobuf;
  const expected = { apiVersion: 'v1', kind: 'Binding' };
  const body = requireObject(
    await readBodyValue(ctx.req, decode === undefined ? undefined : (bytes) => decode(bytes, expected)),
  );
  if (body.kind !== undefined && body.kind !== '' && body.kind !== 'Binding')
    throw new BadRequestError(`not a Binding object: kind ${JSON.stringify(body.kind)}`);
  const read = new BodyReader('Binding', 'v1');
  const metadata = read.object(body, 'metadata', 'ObjectMeta', 'metadata') ?? {};
  const bindingName = read.string(metadata, 'name', 'ObjectMeta', 'metadata.name');
  const name = urlName ?? bindingName;
  if (bindingName !== name) throw new BadRequestError('name in URL does not match name in Binding object');
  const target = read.object(body, 'target', 'ObjectReference', 'target');
  const causes = bindingCauses(target, read);
  // upstream returns the aggregate of field errors as a plain error: a 500
  if (causes.length > 0) throw new InternalError(causes.map((c) => `${c.field}: ${c.message}`).join(', '));
  const annotations = read.object(metadata, 'annotations', 'ObjectMeta', 'metadata.annotations') ?? {};
  const uid = read.string(metadata, 'uid', 'ObjectMeta', 'metadata.uid');
  const rv = read.string(metadata, 'resourceVersion', 'ObjectMeta', 'metadata.resourceVersion');
  const conflict = (why: string): ConflictError =>
    new ConflictError(`Operation cannot be fulfilled on pods/binding ${JSON.stringify(name)}: ${why}`, {
      details: { name, kind: 'pods/binding' },
    });
  const pod = await ctx.server.store.get(pods.storage, { namespace: ctx.target.namespace, name });
  const podConflict = (why: string): ConflictError =>
    new ConflictError(`Operation cannot be fulfilled on pods ${JSON.stringify(name)}: ${why}`, {
      details: { name, kind: 'pods' },
    });
  if (uid !== '' && uid !== pod.metadata.uid)
    throw podConflict(
      `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${String(pod.metadata.uid)}`,
    );
  if (rv !== '' && rv !== pod.metadata.resourceVersion)
    throw podConflict(
      `Precondition failed: ResourceVersion in precondition: ${rv}, ResourceVersion in object meta: ${String(pod.metadata.resourceVersion)}`,
    );
  if (pod.metadata.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null)
    throw conflict(`pod ${name} is being deleted, cannot be assigned to a host`);
  const assigned = nodeName(pod);
  if (assigned !== '') throw conflict(`pod ${name} is already assigned to node ${JSON.stringify(assigned)}`);
  const next = cloneJson(pod) as unknown as MutableObject;
  const spec = (asObject(next.spec) ?? {}) as JsonObject;
  if (Array.isArray(spec.schedulingGates) && spec.schedulingGates.length > 0)
    throw conflict(`pod ${name} has non-empty .spec.schedulingGates`);
  spec.nodeName = read.string(target, 'name', 'ObjectReference', 'target.name');
  next.spec = spec;
  next.metadata.annotations = { ...(asObject(next.metadata.annotations) ?? {}), ...annotations };
  setScheduled(next, new Date(ctx.server.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z'));
  await ctx.server.store.update(pods.storage, next as unknown as KubeObject, {
    dryRun: write.dryRun,
    fieldManager: write.fieldManager,
  });
  writeValue(
    ctx.res,
    201,
    { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 },
    { pretty: ctx.pretty },
  );
}

/** `UpdatePodCondition(PodScheduled=True)`: the transition time changes only with the status. */
function setScheduled(pod: MutableObject, now: string): void {
  const status = (asObject(pod.status) ?? {}) as JsonObject;
  const conditions = Array.isArray(status.conditions) ? [...status.conditions] : [];
  const index = conditions.findIndex((c) => asObject(c)?.type === 'PodScheduled');
  const old = index < 0 ? undefined : asObject(conditions[index]);
  const condition: JsonObject = {
    ...(old ?? {}),
    type: 'PodScheduled',
    status: 'True',
    lastProbeTime: old?.lastProbeTime ?? null,
    lastTransitionTime: old?.status === 'True' ? (old.lastTransitionTime ?? now) : now,
  };
  if (index < 0) conditions.push(condition);
  else conditions[index] = condition;
  status.conditions = conditions;
  pod.status = status;
}
