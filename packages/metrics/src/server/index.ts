/**
 * The operations server: `/metrics`, `/healthz`, `/readyz`, `/debug/keys` over node:http. See
 * {@link OperationsServer}.
 *
 * @module
 */
export { type BindAddress, parseBindAddress } from '../bind-address/index.ts';
export type { DebugKey, DebugKeys } from './debug-keys.ts';
export { OperationsServer, type OperationsServerOptions } from './operations-server.ts';
export type { ProbeSource } from './probes.ts';
