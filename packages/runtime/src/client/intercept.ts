import type { KubeObjectLike, Patch } from '../backend/index.ts';

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
  /**
   * Optional: what a write sends (the object of a `create`, `update` or `updateStatus`, the patch
   * of a `patch`), given before `aroundRequest`; returns it, or a copy to send instead of the same
   * shape (`@converge/tracing` adds an annotation with `propagate: true`). Never change the body
   * given: the caller may still hold it. Not called for dry runs. A hook that throws or returns
   * another shape is ignored (the body is sent as given).
   */
  prepareWrite?(info: ClientRequestInfo, body: ClientWriteBody): ClientWriteBody;
}

/** What a write sends: an object (`create`, `update`, `updateStatus`) or a patch (`patch`). */
export type ClientWriteBody = { readonly object: KubeObjectLike } | { readonly patch: Patch };

/**
 * `body` through `interceptor.prepareWrite`, if it has one; `body` when the hook throws or
 * returns another shape. @internal
 */
export function prepareWrite<B extends ClientWriteBody>(
  interceptor: ClientInterceptor,
  info: ClientRequestInfo,
  body: B,
): B {
  const hook = interceptor.prepareWrite;
  if (hook === undefined) return body;
  let out: unknown;
  try {
    out = hook.call(interceptor, info, body);
  } catch {
    return body;
  }
  if (typeof out !== 'object' || out === null) return body;
  if ('object' in body) {
    const object = (out as { object?: unknown }).object;
    return typeof object === 'object' && object !== null ? (out as B) : body;
  }
  const patch = (out as { patch?: Patch }).patch;
  return typeof patch === 'object' && patch !== null && patch.type === body.patch.type ? (out as B) : body;
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
    ...(first.prepareWrite === undefined && then.prepareWrite === undefined
      ? {}
      : { prepareWrite: (info, body) => prepareWrite(then, info, prepareWrite(first, info, body)) }),
  };
}
