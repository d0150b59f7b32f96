/** What `kube-sync.bench.ts` and its client processes (`kube-sync-client.ts`) tell each other. */

export const PEERS = [
  'limit',
  'limit-pages',
  'converge',
  'converge-pages',
  'converge-young',
  'converge-pages-young',
  'converge-metadata',
  'client-node',
  'fluent',
] as const;

/**
 * The young generation the deploy artefacts give an operator's process (`NODE_OPTIONS` in the
 * Dockerfile and Deployment `converge manifests` writes): semi-spaces of 8 MiB. Node 24's default
 * (up to 64 MiB) makes each scavenge copy tens of megabytes of freshly decoded objects that all
 * survive into the cache, one pause of 16–80 ms; with 8 MiB the pauses are a few ms.
 */
export const YOUNG_GENERATION_FLAG = '--max-semi-space-size=8';

/** Peers that run Converge with {@link YOUNG_GENERATION_FLAG}. */
export function youngGeneration(peer: Peer): boolean {
  return peer === 'converge-young' || peer === 'converge-pages-young';
}
export type Peer = (typeof PEERS)[number];

export interface ClientResult {
  readonly peer: Peer;
  readonly completed: boolean;
  /** Why it did not complete, or what it did on the way (a failed LIST it recovered from). */
  readonly note?: string;
  readonly ms: number;
  readonly objects: number;
  readonly delayMs: number;
  readonly peakRssBytes: number;
  readonly rssBeforeBytes: number;
  readonly heapPerObject: number;
}
