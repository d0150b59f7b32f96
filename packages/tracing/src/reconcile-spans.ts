import type { Cause, ReconcileInfo, ReconcileInterceptor, ReconcileSummary } from '@converge/runtime';
import {
  context,
  isSpanContextValid,
  type Link,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import {
  causeAttributes,
  errorType,
  reconcileAttributes,
  TraceAttributes,
  writerAttributes,
} from './attributes.ts';
import type { Propagation } from './propagation.ts';

/**
 * The reconcile interceptor of {@link Tracing}: a root span per reconcile, `reconcile <controller>`
 * (kind CONSUMER: the work queue hands it what its sources produced), in whose context the
 * reconciler runs, linked to a span per cause. @internal
 */
export class ReconcileSpans implements ReconcileInterceptor {
  readonly #tracer: () => Tracer;
  /**
   * The span of each cause already given one. Causes are frozen objects the queue carries by
   * identity from run to run (a retry keeps its causes), so every run a cause led to links to the
   * same span; the entries go with the causes.
   */
  readonly #events = new WeakMap<Cause, SpanContext>();
  readonly #propagation: Propagation | undefined;

  constructor(tracer: () => Tracer, propagation?: Propagation) {
    this.#tracer = tracer;
    this.#propagation = propagation;
  }

  aroundReconcile(info: ReconcileInfo, run: () => Promise<ReconcileSummary>): Promise<unknown> {
    const tracer = this.#tracer();
    const span = tracer.startSpan(
      `reconcile ${info.controller}`,
      { kind: SpanKind.CONSUMER, root: true, attributes: reconcileAttributes(info) },
      ROOT_CONTEXT,
    );
    // With propagation, the writes of the run name it (their annotation), with its span's context.
    const propagation = this.#propagation;
    const spanContext = span.spanContext();
    const body =
      propagation === undefined
        ? run
        : () => propagation.run(info, isSpanContextValid(spanContext) ? spanContext : undefined, run);
    if (!span.isRecording()) {
      // No SDK (an invalid context: nothing to propagate), or a span sampled out (its context
      // still goes to the children, so that they are sampled out too).
      if (!isSpanContextValid(spanContext)) return body();
    } else if (info.causes.causes.length > 0) {
      // Links after the start: a span that records nothing costs no event span.
      span.addLinks(this.#links(tracer, info));
    }
    return context.with(trace.setSpan(ROOT_CONTEXT, span), body).then(
      (summary) => finish(span, summary),
      (error: unknown) => {
        // `run` does not reject; a span is ended whatever happens.
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
        throw error;
      },
    );
  }

  /** A link per cause the queue timed (at most the queue's `maxCausesPerKey`). */
  #links(tracer: Tracer, info: ReconcileInfo): Link[] {
    const links: Link[] = [];
    for (const cause of info.causes.causes) {
      const event = this.#eventOf(tracer, cause);
      if (event !== undefined) links.push({ context: event, attributes: causeAttributes(cause) });
      // A write of another process that carried its reconcile's trace context: the chain goes on there.
      const writer = cause.writtenBy;
      const remote = writer?.remote === true ? this.#propagation?.remoteSpanOf(writer) : undefined;
      if (remote !== undefined) links.push({ context: remote, attributes: writerAttributes(cause) });
    }
    return links;
  }

  /**
   * The span of a cause: `<type> <Kind>` (kind PRODUCER, no duration) at the time the queue
   * received it, the root of a trace of its own; created the first time a run links to it.
   */
  #eventOf(tracer: Tracer, cause: Cause): SpanContext | undefined {
    const at = cause.at;
    if (at === undefined) return undefined;
    const known = this.#events.get(cause);
    if (known !== undefined) return known;
    const what = cause.object?.kind ?? cause.source;
    const span = tracer.startSpan(
      what === undefined ? cause.type : `${cause.type} ${what}`,
      { kind: SpanKind.PRODUCER, root: true, startTime: at, attributes: causeAttributes(cause) },
      ROOT_CONTEXT,
    );
    span.end(at);
    const event = span.spanContext();
    this.#events.set(cause, event);
    return event;
  }
}

/** Ends a reconcile span with its result; a failed run records its error and status ERROR. */
function finish(span: Span, summary: ReconcileSummary): void {
  const { result } = summary;
  span.setAttribute(TraceAttributes.result, result);
  span.setAttribute(
    TraceAttributes.requeue,
    result === 'error' || result === 'requeue' || result === 'requeue_after',
  );
  if (summary.requeueAfterMs !== undefined)
    span.setAttribute(TraceAttributes.requeueAfterMs, summary.requeueAfterMs);
  if (summary.timedOut) span.setAttribute(TraceAttributes.timedOut, true);
  if (summary.abandoned) span.setAttribute(TraceAttributes.abandoned, true);
  const error = summary.error;
  if (error !== undefined) {
    span.recordException(error);
    span.setAttribute(TraceAttributes.errorType, errorType(error));
    span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
  }
  span.end();
}
