import type { ClientInterceptor, ClientRequestInfo } from '@converge/runtime';
import { context, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import { errorType, httpStatus, requestAttributes, requestSpanName, TraceAttributes } from './attributes.ts';

/**
 * The client interceptor of {@link Tracing}: a CLIENT span per request the client sends, named
 * like `PATCH apps/v1 deployments`, a child of the active span (the reconcile's, inside a
 * reconcile). Reads served by the cache send nothing and get no span. @internal
 */
export class RequestSpans implements ClientInterceptor {
  readonly #tracer: () => Tracer;

  constructor(tracer: () => Tracer) {
    this.#tracer = tracer;
  }

  aroundRequest(info: ClientRequestInfo, run: () => Promise<unknown>): Promise<unknown> {
    const active = context.active();
    const span = this.#tracer().startSpan(
      requestSpanName(info),
      { kind: SpanKind.CLIENT, attributes: requestAttributes(info) },
      active,
    );
    return context.with(trace.setSpan(active, span), run).then(
      () => span.end(),
      (error: unknown) => {
        if (error instanceof Error) {
          span.recordException(error);
          span.setAttribute(TraceAttributes.errorType, errorType(error));
          const status = httpStatus(error);
          if (status !== undefined) span.setAttribute(TraceAttributes.httpStatus, status);
          span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
        } else {
          span.setAttribute(TraceAttributes.errorType, '_OTHER');
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.end();
      },
    );
  }
}
