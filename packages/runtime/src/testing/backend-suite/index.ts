/**
 * The Backend conformance suite: one vitest suite every Backend passes (the in-process store, the
 * Kubernetes HTTP backend against the embedded API server, the NATS KV backend, your own).
 *
 * - {@link runBackendSuite} declares the tests; {@link BackendHarness} is what `makeBackend` returns.
 * - {@link suiteTypes} are the kinds the suite writes (register them, e.g. as CRDs) and
 *   {@link suiteNamespaces} the namespaces it writes in.
 * - {@link BackendCapabilities} gate optional behaviour; a missing capability skips only the tests
 *   that need it, with the reason in the title.
 * - {@link createReferenceBackend} is a small in-memory backend that passes the suite, to compare
 *   your backend's behaviour against.
 *
 * What the contract expects where Kubernetes leaves the Backend level open:
 * - errors surface as typed errors (`NotFoundError`, `ConflictError`, …); watch errors (ExpiredError)
 *   surface from the iteration, never from the `watch()` call;
 * - every returned object (writes, get, list items, watch events) carries `apiVersion` and `kind`
 *   and is the caller's to mutate (a copy) or frozen;
 * - a namespace on a cluster-scoped object is a `BadRequestError` (the API server would answer 404
 *   for the namespaced URL; at the Backend level there is no URL, only the object);
 * - resourceVersions are opaque to controllers, but ordered: the suite compares them as decimal
 *   revisions to check list and watch ordering;
 * - the BOOKMARK that ends `sendInitialEvents` is sent whenever `sendInitialEvents` is asked for
 *   (the suite also sets `allowBookmarks`, as Kubernetes requires).
 *
 * vitest (and fast-check, for the property test) must be installed to use this module.
 *
 * @example
 * import { runBackendSuite } from '@converge/runtime/testing';
 *
 * runBackendSuite({
 *   name: 'nats',
 *   capabilities: { bookmarks: false },
 *   timeoutMs: 15_000,
 *   makeBackend: async (types) => {
 *     const backend = await NatsBackend.connect({ servers: url, types, bucketPrefix: randomPrefix() });
 *     return { backend, close: () => backend.close() };
 *   },
 * });
 *
 * @module
 */
export type { BackendCapabilities, BackendHarness, BackendSuiteOptions } from './options.ts';
export {
  createReferenceBackend,
  ReferenceBackend,
  type ReferenceBackendOptions,
} from './reference-backend.ts';
export { runBackendSuite } from './run-backend-suite.ts';
export { suiteNamespaces, suiteTypes } from './types.ts';
