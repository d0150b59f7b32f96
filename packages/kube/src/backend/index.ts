/**
 * The Kubernetes HTTP Backend: {@link KubeBackend} and its options, REST paths and discovery.
 *
 * @module
 */
export { Discovery } from './discovery.ts';
export { KubeBackend, type KubeBackendStats } from './kube-backend.ts';
export type { KubeBackendOptions } from './options.ts';
export { groupVersionPath, resourcePath } from './paths.ts';
export type { WatchCounters } from './watch.ts';
