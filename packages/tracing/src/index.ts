/**
 * OpenTelemetry traces for Converge, through `@opentelemetry/api` only (a peer dependency):
 * nothing is recorded, and almost nothing done, until the application registers an SDK.
 *
 * - {@link Tracing} — `instrument(controller)` gives each reconcile a root span
 *   `reconcile <controller>` linked to a span per cause (the watch events that enqueued its key,
 *   at the time the queue received them), with its result, and its exception and status ERROR
 *   when it fails; `instrument(manager)` or `instrument(client)` gives each request the client
 *   sends a span `PATCH apps/v1 deployments`, a child of the reconcile that made it.
 * - `propagate: true` (opt-in) — cause chains across processes: the writes of a traced reconcile
 *   carry {@link WRITTEN_BY_ANNOTATION} (controller, key, reconcileId, W3C `traceparent`), and an
 *   instrumented manager's sources name the writer of an object another process stamped
 *   (`writtenBy` with `remote: true`); {@link parseWrittenBy} reads a value.
 * - {@link TraceAttributes} — the attribute names: the semantic conventions' where they exist
 *   (`k8s.namespace.name`, `k8s.deployment.name`, `http.request.method`, `error.type`),
 *   `converge.*` otherwise.
 *
 * The runtime itself does not depend on OpenTelemetry: it offers interceptors
 * (`ReconcileInterceptor`, `ClientInterceptor`) that this package implements.
 *
 * @example
 * import { NodeSDK } from '@opentelemetry/sdk-node';
 * import { Tracing } from '@converge/tracing';
 *
 * new NodeSDK({ serviceName: 'website-operator' }).start(); // OTLP to localhost:4318 by default
 * const websites = manager.controller(websiteType).owns(deploymentType).complete(reconcile);
 * new Tracing().instrument(manager).instrument(websites);
 *
 * @module
 */

export { TraceAttributes } from './attributes.ts';
export {
  TRACER_NAME,
  TRACER_VERSION,
  type Traceable,
  type TraceableClient,
  type TraceableController,
  type TraceableManager,
  Tracing,
  type TracingOptions,
} from './tracing.ts';
export {
  parseWrittenBy,
  WRITTEN_BY_ANNOTATION,
  type WrittenBy,
  type WrittenByLink,
} from './written-by.ts';
