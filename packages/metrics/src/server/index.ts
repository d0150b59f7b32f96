/**
 * The operations server: `/metrics`, `/healthz`, `/readyz`, `/debug/keys` (and the dashboard, `/`
 * and `/debug/events`) over node:http. See
 * {@link OperationsServer}.
 *
 * @module
 */
export { type BindAddress, parseBindAddress } from '../bind-address/index.ts';
export type { DashboardController, DashboardKey, DashboardSnapshot } from './dashboard-snapshot.ts';
export type { DebugKey, DebugKeys } from './debug-keys.ts';
export { OperationsServer, type OperationsServerOptions } from './operations-server.ts';
export type { ProbeSource } from './probes.ts';
