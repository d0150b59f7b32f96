/**
 * `@converge/apiserver`: the embedded Kubernetes-compatible API server over the versioned store.
 * Real kubectl and @kubernetes/client-node use it without knowing. See `./server/index.ts` for the
 * HTTP core, and `./validation/index.ts` for checking a CRD's `x-kubernetes-validations` rules and
 * its objects in a plain unit test, without a server.
 *
 * @module
 */
export * from './server/index.ts';
export * from './validation/index.ts';
