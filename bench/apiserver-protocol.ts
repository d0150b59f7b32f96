/**
 * Messages between `apiserver.bench.ts` (the server process) and `apiserver-client.ts` (the client
 * process it spawns), over the child's IPC channel. Every request carries an `id`; the client
 * answers each with a reply carrying the same `id`, or an `error` text.
 */

/** Where the client sends its requests. */
export interface Target {
  readonly port: number;
  /** Bearer token (undefined for the limit servers, which check none). */
  readonly token: string | undefined;
}

/** One LIST (GET) streamed to the end. `verify` also hashes and parses the body (untimed runs). */
export interface ListRequest {
  readonly op: 'list';
  readonly target: Target;
  readonly path: string;
  readonly verify: boolean;
}

export interface ListReply {
  readonly status: number;
  readonly bytes: number;
  /** Request sent → last byte. */
  readonly ms: number;
  /** Request sent → first body byte. */
  readonly firstByteMs: number;
  /** Occurrences of `"uid":"` in the body (one per item; counted without parsing). */
  readonly uids: number;
  /** With `verify`: sha256 of the body, and what parsing it found. */
  readonly sha256?: string;
  readonly parsed?: { readonly kind: string; readonly items: number; readonly distinctNames: number };
}

/** `count` sequential POSTs over one keep-alive connection. */
export interface CreatesRequest {
  readonly op: 'creates';
  readonly target: Target;
  readonly path: string;
  readonly namespace: string;
  readonly namePrefix: string;
  readonly count: number;
}

export interface CreatesReply {
  readonly ms: number;
  /** Responses whose status was not 201. */
  readonly failures: number;
  readonly firstFailure?: string;
}

/** Opens `count` watches on `path` (each its own connection); resolves once all have headers. */
export interface WatchOpenRequest {
  readonly op: 'watch-open';
  readonly target: Target;
  readonly path: string;
  readonly count: number;
}

export interface WatchOpenReply {
  readonly opened: number;
}

/**
 * `changes` sequential PUTs of the ConfigMap at `path`, each with a new `data.seq`; after each, waits
 * for every open watch to deliver it (when `watched`) or for the PUT's response only.
 */
export interface ChangesRequest {
  readonly op: 'changes';
  readonly target: Target;
  /** The object's path, e.g. /api/v1/namespaces/ns/configmaps/name. */
  readonly path: string;
  readonly namespace: string;
  readonly name: string;
  readonly firstSeq: number;
  readonly changes: number;
  readonly watched: boolean;
}

export interface ChangesReply {
  /** Per change, PUT sent → the last watch received it (empty when not watched). */
  readonly allMs: readonly number[];
  /** Per change, PUT sent → the first watch received it (empty when not watched). */
  readonly firstMs: readonly number[];
  /** Per change, PUT sent → its response. */
  readonly putMs: readonly number[];
  /** Wall time of the whole sequence. */
  readonly totalMs: number;
  /** Problems found checking every received event (type, name, order, gaps). */
  readonly problems: readonly string[];
}

export interface WatchCloseRequest {
  readonly op: 'watch-close';
}

export interface WatchCloseReply {
  /** How the watches ended before the client cut them: clean EOFs seen. */
  readonly closed: number;
}

export type ClientRequest =
  | ListRequest
  | CreatesRequest
  | WatchOpenRequest
  | ChangesRequest
  | WatchCloseRequest;

/** A request as sent (with its id). */
export type Envelope = ClientRequest & { readonly id: number };

/** A reply as received. */
export interface ReplyEnvelope {
  readonly id: number;
  readonly error?: string;
  readonly reply?: unknown;
}

/** The ConfigMap the client writes: ~0.6 KB of JSON once the server adds its metadata. */
export function configMapBody(namespace: string, name: string, seq: number): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace,
      labels: { app: 'bench', tier: 'backend', release: 'stable' },
      annotations: {
        'example.com/owner': 'owner@example.com',
        'example.com/description': 'Settings of the bench application, rendered by its operator.',
      },
    },
    data: {
      seq: String(seq).padStart(8, '0'),
      mode: 'active',
      image: 'registry.example.com/bench/app:1.0.0',
      'settings.yaml':
        'replicas: 3\nlogLevel: info\nfeatureFlags: [alpha, beta]\ntimeout: 30s\nendpoint: https://api.example.com/v1\n',
    },
  });
}
