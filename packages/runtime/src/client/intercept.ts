/** The Kubernetes verb of a request a client sends to its backend. */
export type ClientVerb = 'get' | 'list' | 'create' | 'update' | 'patch' | 'delete';

/**
 * What a {@link ClientInterceptor} is told about one request to the backend: what it is about,
 * never an object's body.
 */
export interface ClientRequestInfo {
  readonly verb: ClientVerb;
  /** The API group ('' for the core group). */
  readonly group: string;
  readonly version: string;
  /** The resource (plural), as in the request's path. */
  readonly resource: string;
  /** `status` for `updateStatus` and status patches. */
  readonly subresource?: 'status';
  readonly namespace?: string;
  /** The object's name; none for `list` and for a `create` by `generateName`. */
  readonly name?: string;
  /** A dry run: nothing is stored. */
  readonly dryRun?: boolean;
}

/**
 * A hook around each request a `Client` sends to its backend (a tracing adapter's): writes, and
 * reads that do not come from the cache. `aroundRequest` calls `run` once and returns its promise,
 * or a promise that settles after it; it may call `run` inside a context of its own (a span's),
 * as the backend call starts synchronously within `run`.
 *
 * The interceptor observes; the caller always gets `run`'s result or error. A hook that throws,
 * rejects or does not call `run` is ignored (the request is sent anyway, once).
 *
 * @example
 * client.observe({
 *   interceptor: {
 *     aroundRequest: async (info, run) => {
 *       const started = performance.now();
 *       try { return await run(); } finally { record(info.verb, performance.now() - started); }
 *     },
 *   },
 * });
 */
export interface ClientInterceptor {
  aroundRequest(info: ClientRequestInfo, run: () => Promise<unknown>): Promise<unknown>;
}

/**
 * `body` through `interceptor`, sent exactly once whatever the interceptor does; settles as
 * `body` settles. @internal
 */
export function interceptRequest<T>(
  interceptor: ClientInterceptor,
  info: ClientRequestInfo,
  body: () => Promise<T>,
): Promise<T> {
  let sent: Promise<T> | undefined;
  const once = (): Promise<T> => {
    if (sent === undefined) {
      sent = body();
      // Handled here too: an interceptor that drops `run`'s promise must not make it unhandled.
      sent.catch(() => undefined);
    }
    return sent;
  };
  let around: Promise<unknown>;
  try {
    around = Promise.resolve(interceptor.aroundRequest(info, once));
  } catch {
    return once();
  }
  return around.then(once, once);
}

/** Two interceptors as one: `first` around `then`. @internal */
export function joinRequestInterceptors(
  first: ClientInterceptor | undefined,
  then: ClientInterceptor,
): ClientInterceptor {
  if (first === undefined) return then;
  return {
    aroundRequest: (info, run) => interceptRequest(first, info, () => interceptRequest(then, info, run)),
  };
}
