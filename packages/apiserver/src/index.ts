/**
 * The embedded Kubernetes-compatible API server (in progress).
 *
 * @module
 */
export {};
