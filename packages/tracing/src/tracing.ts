import { randomUUID } from 'node:crypto';
import {
  type ClientInterceptor,
  OptionsError,
  type ReconcileInterceptor,
  type RemoteWriterLookup,
} from '@converge/runtime';
import { type Tracer, type TracerProvider, trace } from '@opentelemetry/api';
import { Propagation } from './propagation.ts';
import { ReconcileSpans } from './reconcile-spans.ts';
import { RequestSpans } from './request-spans.ts';

/** The instrumentation scope of the spans. */
export const TRACER_NAME = '@converge/tracing';
export const TRACER_VERSION = '0.1.0';

export interface TracingOptions {
  /**
   * Where the spans go. Default: the global provider of `@opentelemetry/api`, which is the SDK the
   * application registers (before or after this is created), and records nothing until one is.
   */
  readonly tracerProvider?: TracerProvider;
  /**
   * Cause chains across processes (see `WRITTEN_BY_ANNOTATION`). Writes an instrumented client
   * makes inside a reconcile of an instrumented controller carry the annotation
   * `converge.dev/written-by`: the reconcile's controller, key and reconcileId, its span's W3C
   * `traceparent`, the process, and the writers before it (two links). An instrumented manager's
   * sources read it back: an event whose object another process stamped in that version names
   * that reconcile as its cause's `writtenBy` (`remote: true`), so `formatCause`, `ctx.causes`,
   * `/debug/keys` and hot-loop detection follow the chain, and the reconcile span links to the
   * writer's span. A write keeps the stamp the object holds when it names the same controller and
   * key and the write sends what this process last sent to that object, so that a no-op update
   * stays a no-op. Default false.
   */
  readonly propagate?: boolean;
  /**
   * What names this process in the annotation (a process reads only stamps of others; its own
   * writes are named by its `WriteLedger`). Default: a random UUID. One `Tracing` per process.
   */
  readonly processId?: string;
}

/** What `instrument` needs of a controller (a `Controller` or a `DynamicController`). */
export interface TraceableController {
  readonly name: string;
  observe(hooks: { readonly interceptor?: ReconcileInterceptor }): void;
}

/** What `instrument` needs of a client (a `Client`). */
export interface TraceableClient {
  readonly backend: unknown;
  observe(hooks: { readonly interceptor?: ClientInterceptor }): void;
}

/** What `instrument` needs of a manager (a `Manager`): its client, and where its sources ask for remote writers. */
export interface TraceableManager {
  readonly client: TraceableClient;
  readonly remoteWriters?: { use(lookup: RemoteWriterLookup): () => void };
}

/** What `instrument` accepts: a controller, a client, or a manager (its client, and with `propagate` its sources). */
export type Traceable = TraceableController | TraceableClient | TraceableManager;

const EXPECTED = 'a Controller, DynamicController, Client or Manager';

/**
 * OpenTelemetry traces of an operator, through `@opentelemetry/api` only: nothing is recorded
 * until the application registers an SDK (or passes a `tracerProvider`).
 *
 * - Each reconcile of an instrumented controller is a root span `reconcile <controller>` (kind
 *   CONSUMER) with the request (`k8s.namespace.name`, `converge.object.name`, `converge.kind`…),
 *   its failures and causes, and at the end its result (`converge.reconcile.result`, `…requeue`,
 *   `…requeue_after_ms`); a failed run records its exception and status ERROR.
 * - It links to a span per cause (`modified Widget`, kind PRODUCER, at the time the queue received
 *   the event: the watch event's type, kind, namespace, name, uid and resourceVersion), at most
 *   the queue's `maxCausesPerKey`; a retry links to the same spans as the run that failed.
 * - The reconciler runs in the span's context: the requests of an instrumented client (and any
 *   other instrumentation) made during the reconcile are its children, `PATCH apps/v1 deployments`
 *   (kind CLIENT, `http.request.method`, the resource, namespace and name, never a body).
 *
 * Spans of client requests need a context manager (the Node SDK registers one, AsyncLocalStorage).
 *
 * @example
 * const tracing = new Tracing();
 * tracing.instrument(manager);   // the manager's client: its requests
 * tracing.instrument(websites);  // a controller: its reconciles
 */
export class Tracing {
  readonly #provider: TracerProvider | undefined;
  readonly #reconciles: ReconcileSpans;
  readonly #propagation: Propagation | undefined;
  readonly #clientInterceptor: ClientInterceptor;
  readonly #instrumented = new WeakSet<object>();
  #tracer: Tracer | undefined;

  constructor(options: TracingOptions = {}) {
    if (typeof options !== 'object' || options === null)
      throw new OptionsError('options', options, 'an object');
    const provider = options.tracerProvider;
    if (provider !== undefined && typeof provider?.getTracer !== 'function') {
      throw new OptionsError('tracerProvider', provider, 'an OpenTelemetry TracerProvider');
    }
    this.#provider = provider;
    if (options.propagate !== undefined && typeof options.propagate !== 'boolean')
      throw new OptionsError('propagate', options.propagate, 'a boolean');
    const processId = options.processId;
    if (
      processId !== undefined &&
      (typeof processId !== 'string' || processId === '' || processId.length > 128)
    )
      throw new OptionsError('processId', processId, 'a non-empty string of at most 128 characters');
    this.#propagation = options.propagate === true ? new Propagation(processId ?? randomUUID()) : undefined;
    const tracer = (): Tracer => {
      // The global provider is a proxy: a tracer got from it follows the SDK registered later.
      this.#tracer ??= (this.#provider ?? trace.getTracerProvider()).getTracer(TRACER_NAME, TRACER_VERSION);
      return this.#tracer;
    };
    this.#reconciles = new ReconcileSpans(tracer, this.#propagation);
    const requests = new RequestSpans(tracer);
    const propagation = this.#propagation;
    this.#clientInterceptor =
      propagation === undefined
        ? requests
        : {
            aroundRequest: (info, run) =>
              requests.aroundRequest(info, () => propagation.interceptor.aroundRequest(info, run)),
            prepareWrite: propagation.interceptor.prepareWrite,
          };
  }

  /**
   * Traces a part of an operator (idempotent per part): a `Controller` or `DynamicController`
   * (its reconciles), a `Client` (its requests), or a `Manager` (its client's requests; the
   * manager does not list its controllers: instrument each one).
   */
  instrument(target: Traceable): this {
    if (typeof target !== 'object' || target === null) throw new OptionsError('target', target, EXPECTED);
    if (this.#instrumented.has(target)) return this;
    const t = target as {
      readonly name?: unknown;
      readonly backend?: unknown;
      readonly observe?: unknown;
      readonly informers?: unknown;
    };
    if (typeof t.observe === 'function' && 'backend' in t) {
      (target as TraceableClient).observe({ interceptor: this.#clientInterceptor });
    } else if (typeof t.observe === 'function' && typeof t.name === 'string') {
      (target as TraceableController).observe({ interceptor: this.#reconciles });
    } else if (typeof t.informers === 'object' && t.informers !== null && 'client' in t) {
      const manager = target as TraceableManager;
      this.#instrumented.add(target);
      const propagation = this.#propagation;
      if (propagation !== undefined && typeof manager.remoteWriters?.use === 'function')
        manager.remoteWriters.use(propagation.lookup);
      return this.instrument(manager.client);
    } else {
      throw new OptionsError('target', target, EXPECTED);
    }
    this.#instrumented.add(target);
    return this;
  }

  /** The interceptor to give a controller by hand (`new Controller({ interceptor })`). */
  get reconcileInterceptor(): ReconcileInterceptor {
    return this.#reconciles;
  }

  /** The interceptor to give a client by hand (`new Client({ interceptor })`). */
  get clientInterceptor(): ClientInterceptor {
    return this.#clientInterceptor;
  }

  /**
   * With `propagate`, the lookup to install in the `RemoteWriters` of sources built by hand
   * (`instrument(manager)` installs it in the manager's); undefined without.
   */
  get remoteWriterLookup(): RemoteWriterLookup | undefined {
    return this.#propagation?.lookup;
  }

  /** With `propagate`, what names this process in the annotation; undefined without. */
  get processId(): string | undefined {
    return this.#propagation?.processId;
  }
}
