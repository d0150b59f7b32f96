/**
 * `@converge/apiserver`: the embedded Kubernetes-compatible API server over the versioned store.
 * Real kubectl and @kubernetes/client-node use it without knowing. See `./server/index.ts` for the
 * HTTP core.
 *
 * @module
 */
export * from './server/index.ts';
