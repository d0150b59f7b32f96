/** What `kube-sync.bench.ts` and its client processes (`kube-sync-client.ts`) tell each other. */

export const PEERS = ['limit', 'limit-pages', 'converge', 'converge-pages', 'client-node', 'fluent'] as const;
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
