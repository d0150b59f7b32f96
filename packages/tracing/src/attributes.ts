import type { Cause, ClientRequestInfo, ReconcileInfo } from '@converge/runtime';
import type { Attributes } from '@opentelemetry/api';

/**
 * The attribute names the spans carry: OpenTelemetry's semantic conventions where they have one
 * (`k8s.namespace.name`, `k8s.deployment.name`…, `http.request.method`, `http.response.status_code`,
 * `error.type`), `converge.*` for the rest.
 */
export const TraceAttributes = {
  controller: 'converge.controller',
  kind: 'converge.kind',
  reconcileId: 'converge.reconcile.id',
  requestKey: 'converge.request.key',
  failures: 'converge.reconcile.failures',
  causes: 'converge.reconcile.causes',
  causesDropped: 'converge.reconcile.causes_dropped',
  result: 'converge.reconcile.result',
  requeue: 'converge.reconcile.requeue',
  requeueAfterMs: 'converge.reconcile.requeue_after_ms',
  timedOut: 'converge.reconcile.timed_out',
  abandoned: 'converge.reconcile.abandoned',
  causeType: 'converge.cause.type',
  causeSource: 'converge.cause.source',
  causeSecondary: 'converge.cause.secondary',
  causeInitialList: 'converge.cause.initial_list',
  causeFinalStateUnknown: 'converge.cause.final_state_unknown',
  causePurged: 'converge.cause.purged',
  writerController: 'converge.writer.controller',
  writerKey: 'converge.writer.key',
  writerReconcileId: 'converge.writer.reconcile_id',
  writerRemote: 'converge.writer.remote',
  objectKind: 'converge.object.kind',
  objectName: 'converge.object.name',
  objectUid: 'converge.object.uid',
  objectResourceVersion: 'converge.object.resource_version',
  verb: 'converge.client.verb',
  group: 'converge.client.group',
  version: 'converge.client.version',
  resource: 'converge.client.resource',
  subresource: 'converge.client.subresource',
  dryRun: 'converge.client.dry_run',
  namespace: 'k8s.namespace.name',
  httpMethod: 'http.request.method',
  httpStatus: 'http.response.status_code',
  errorType: 'error.type',
} as const;

/**
 * The semantic conventions' `k8s.<kind>` prefix of the built-in resources that have one, by
 * `group/resource` (core group: the resource alone).
 */
const K8S_PREFIX: ReadonlyMap<string, string> = new Map([
  ['pods', 'k8s.pod'],
  ['nodes', 'k8s.node'],
  ['replicationcontrollers', 'k8s.replicationcontroller'],
  ['apps/deployments', 'k8s.deployment'],
  ['apps/replicasets', 'k8s.replicaset'],
  ['apps/statefulsets', 'k8s.statefulset'],
  ['apps/daemonsets', 'k8s.daemonset'],
  ['batch/jobs', 'k8s.job'],
  ['batch/cronjobs', 'k8s.cronjob'],
]);

/** `k8s.<kind>.name` for a built-in resource with a semantic convention, else undefined. */
export function k8sNameAttribute(group: string, resource: string): string | undefined {
  const prefix = K8S_PREFIX.get(group === '' ? resource : `${group}/${resource}`);
  return prefix === undefined ? undefined : `${prefix}.name`;
}

/** The group and resource of a dynamic controller's kind (`group/version/resource`, `version/resource`). */
export function parseKind(kind: string): { readonly group: string; readonly resource: string } | undefined {
  const parts = kind.split('/');
  if (parts.length === 3) return { group: parts[0] as string, resource: parts[2] as string };
  if (parts.length === 2) return { group: '', resource: parts[1] as string };
  return undefined;
}

/** The attributes a reconcile span starts with. */
export function reconcileAttributes(info: ReconcileInfo): Attributes {
  const a: Attributes = {
    [TraceAttributes.controller]: info.controller,
    [TraceAttributes.reconcileId]: info.reconcileId,
    [TraceAttributes.requestKey]: info.key,
    [TraceAttributes.failures]: info.failures,
    [TraceAttributes.causes]: info.causes.causes.length,
  };
  if (info.causes.dropped > 0) a[TraceAttributes.causesDropped] = info.causes.dropped;
  if (info.namespace !== undefined) a[TraceAttributes.namespace] = info.namespace;
  if (info.name !== undefined) a[TraceAttributes.objectName] = info.name;
  if (info.kind !== undefined) {
    a[TraceAttributes.kind] = info.kind;
    const parsed = parseKind(info.kind);
    const named = parsed && k8sNameAttribute(parsed.group, parsed.resource);
    if (named !== undefined && info.name !== undefined) a[named] = info.name;
  }
  return a;
}

/** The attributes of a cause: on its event span and on the reconcile's link to it. */
export function causeAttributes(cause: Cause): Attributes {
  const a: Attributes = { [TraceAttributes.causeType]: cause.type };
  if (cause.source !== undefined) a[TraceAttributes.causeSource] = cause.source;
  if (cause.secondary === true) a[TraceAttributes.causeSecondary] = true;
  if (cause.initialList === true) a[TraceAttributes.causeInitialList] = true;
  if (cause.finalStateUnknown === true) a[TraceAttributes.causeFinalStateUnknown] = true;
  if (cause.purged === true) a[TraceAttributes.causePurged] = true;
  const o = cause.object;
  if (o !== undefined) {
    if (o.kind !== undefined) a[TraceAttributes.objectKind] = o.kind;
    if (o.namespace !== undefined) a[TraceAttributes.namespace] = o.namespace;
    if (o.name !== undefined) a[TraceAttributes.objectName] = o.name;
    if (o.uid !== undefined) a[TraceAttributes.objectUid] = o.uid;
    if (o.resourceVersion !== undefined) a[TraceAttributes.objectResourceVersion] = o.resourceVersion;
  }
  return a;
}

/**
 * The attributes of a link to the reconcile, in another process, whose write a cause echoes: the
 * cause's, and the writer's controller, key and reconcile id.
 */
export function writerAttributes(cause: Cause): Attributes {
  const a = causeAttributes(cause);
  const w = cause.writtenBy;
  if (w !== undefined) {
    a[TraceAttributes.writerController] = w.controller;
    a[TraceAttributes.writerKey] = w.key;
    a[TraceAttributes.writerReconcileId] = w.reconcileId;
    if (w.remote === true) a[TraceAttributes.writerRemote] = true;
  }
  return a;
}

/** The HTTP method of a verb, as the request would use. */
const METHOD: Readonly<Record<ClientRequestInfo['verb'], string>> = {
  get: 'GET',
  list: 'GET',
  create: 'POST',
  update: 'PUT',
  patch: 'PATCH',
  delete: 'DELETE',
};

/** A client request's span name: `PATCH apps/v1 deployments`, `PUT v1 pods/status`. */
export function requestSpanName(info: ClientRequestInfo): string {
  const gv = info.group === '' ? info.version : `${info.group}/${info.version}`;
  const resource = info.subresource === undefined ? info.resource : `${info.resource}/${info.subresource}`;
  return `${METHOD[info.verb] ?? info.verb} ${gv} ${resource}`;
}

/** The attributes of a client request's span: what it is about, never an object's body. */
export function requestAttributes(info: ClientRequestInfo): Attributes {
  const a: Attributes = {
    [TraceAttributes.httpMethod]: METHOD[info.verb] ?? '_OTHER',
    [TraceAttributes.verb]: info.verb,
    [TraceAttributes.version]: info.version,
    [TraceAttributes.resource]: info.resource,
  };
  if (info.group !== '') a[TraceAttributes.group] = info.group;
  if (info.subresource !== undefined) a[TraceAttributes.subresource] = info.subresource;
  if (info.namespace !== undefined) a[TraceAttributes.namespace] = info.namespace;
  if (info.name !== undefined) {
    a[TraceAttributes.objectName] = info.name;
    const named = k8sNameAttribute(info.group, info.resource);
    if (named !== undefined) a[named] = info.name;
  }
  if (info.dryRun === true) a[TraceAttributes.dryRun] = true;
  return a;
}

/**
 * `error.type` of an error: a backend error's Kubernetes reason (`NotFound`, `Conflict`), a
 * Converge error's code, else its class name.
 */
export function errorType(error: Error): string {
  const { reason, code } = error as { reason?: unknown; code?: unknown };
  if (typeof reason === 'string' && reason !== '') return reason;
  if (typeof code === 'string' && code !== '') return code;
  return error.name || 'Error';
}

/** The HTTP status a backend error carries, if any. */
export function httpStatus(error: Error): number | undefined {
  const status = (error as { status?: unknown }).status;
  return typeof status === 'number' && Number.isInteger(status) ? status : undefined;
}
