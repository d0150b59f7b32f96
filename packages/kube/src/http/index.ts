/**
 * HTTP to the Kubernetes API: one keep-alive undici pool per cluster, authentication, Retry-After,
 * and typed errors from `metav1.Status`.
 *
 * @module
 */
export { parseJson, readBody } from './body.ts';
export { type ClientCertificate, createPool, type PoolTimeouts } from './pool.ts';
export {
  errorFromResponse,
  errorFromStatus,
  isStatus,
  retryAfterSeconds,
  type Status,
} from './status-error.ts';
export {
  type KubeRequest,
  type KubeResponse,
  Transport,
  type TransportCounters,
  type TransportOptions,
  transportError,
} from './transport.ts';
