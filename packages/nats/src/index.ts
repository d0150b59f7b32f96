/**
 * `@converge/nats`: the {@link Backend} over NATS JetStream KV, so Kubernetes-style controllers can
 * have their primaries (or secondaries) in a KV bucket — informers, caches, finalizers, owner
 * garbage collection and optimistic concurrency work as against Kubernetes. It passes the same
 * Backend conformance suite as the in-process store.
 *
 * - Layout: one bucket per resource type (`<bucketPrefix><group>_<version>_<plural>`, the group's
 *   dots as `-`, core as `core`; `bucketFor` overrides it), created when missing with `history`
 *   (default 16) revisions per key. A key is `<namespace>.<name>`, each part escaped to KV key
 *   characters (`.` → `_2e`, `_` → `_5f`, any other character outside `[-/=A-Za-z0-9]` → `_` plus
 *   its UTF-8 bytes in hex, the empty namespace of cluster-scoped objects → `_`): injective and
 *   reversible. Values are the objects' JSON; `resourceVersion` is the KV revision (the stream
 *   sequence) and is not stored in the value. That is {@link convergeCodec}; `codecFor` gives a
 *   type's bucket another {@link KvCodec}, to serve buckets another program laid out (Kumori's
 *   Go controllers, say) in place. Whatever a codec returns is checked like the default's values.
 * - Semantics are the store's, through its shared object strategies: uid, creationTimestamp,
 *   generation (1 on create, +1 on changes outside metadata and status, for types that track it),
 *   the status subresource, name generation, metadata validation, finalizers (a delete of an object
 *   with finalizers sets deletionTimestamp; removing the last finalizer deletes it), propagation
 *   policies, delete preconditions, dryRun, merge and JSON patch (strategic merge and apply are
 *   UnsupportedErrors, as in the store). Every write is a put conditioned on the key's revision
 *   (`expected last subject sequence`): a stale resourceVersion is a ConflictError, a write without
 *   one is retried on the new state; a key whose last entry is a delete marker counts as absent.
 * - Deletes publish a delete marker (`KV-Operation: DEL`, or `PURGE` with `deleteMode: 'purge'`)
 *   whose body is the object's last state, so watchers get DELETED with it; a watch marks the
 *   DELETED of a purge marker (this backend's or another writer's `kv.purge`) `purged: true`, so
 *   informers pass it on and a reconcile's causes tell a purge from a delete. A bare marker from
 *   another writer (`kv.delete`) is reported with metadata rebuilt from the key (apiVersion, kind,
 *   name, namespace, resourceVersion = the marker's revision).
 * - list: one ordered consumer delivering the last entry per key, read until nothing is pending — a
 *   consistent snapshot whose revision is the list's resourceVersion; no per-key requests; it yields
 *   to the event loop every 1000 entries. `limit`/`continue`: the rest of a paginated list is held
 *   in memory for `continueTtlMs` (at most `maxContinueSnapshots`); a token is valid only in the
 *   process that issued it, and an unknown or expired one is an ExpiredError (410).
 * - watch: from a revision, one ordered consumer from the next revision; the client recreates it
 *   after reconnects, two missed idle heartbeats (`heartbeatMs`, default 5 s: a hung server) or a
 *   deleted consumer, from the last delivered revision, without gaps or duplicates. ADDED for puts
 *   of a create (this backend marks them `Converge-Operation: CREATE`; a put asserting the key was
 *   new counts too), MODIFIED for other puts, DELETED for markers; label-selector watches report an
 *   object leaving the selector as DELETED and entering it as ADDED. Without a revision (or '0'): synthetic ADDED for every
 *   object, then live events; `sendInitialEvents` ends them with a BOOKMARK marked
 *   `initialEventsEnd`. `allowBookmarks`: a BOOKMARK every `bookmarkIntervalMs` and before a
 *   `timeoutMs` end.
 * - Expiry (410 {@link ExpiredError}, from the iteration): a watch expires when a revision after its
 *   start is no longer in the stream — a key changed more than `history` times, a purge, a
 *   {@link NatsBackend.compact} — detected from the stream's first revision at the start and from
 *   any gap in the revisions it receives; a revision newer than the bucket's last (a recreated
 *   bucket) expires too. A running watch also checks its bucket's stream every
 *   `streamCheckIntervalMs` (default 30 s) and at once when its consumer was lost or recreated: a
 *   deleted, recreated (new creation time) or purged bucket (its marker entry, the first revision,
 *   gone) expires it, and messages wait for a running check, so nothing of a recreated bucket is
 *   reported as the old one's. Informers then relist.
 * - {@link NatsBackend.replayMarkers}: an opt-in controller source that, at start, enqueues every
 *   key whose last entry is a delete or purge marker with a `deleted` cause (`purged` for a purge),
 *   so primaries deleted while no controller ran get their delete or purge run.
 * - Garbage collection: after its own deletes the backend runs a pass over its buckets (Background
 *   deletes dependents after their owner, Orphan removes owner references, Foreground waits for
 *   dependents with blockOwnerDeletion). Owners deleted by other processes are caught by
 *   {@link NatsBackend.collectGarbage} or the {@link NatsBackend.garbageCollector} runnable.
 * - Malformed values other writers left (not JSON, not an object, another kind, no metadata, a
 *   name that differs from the key, an undecodable key) never break a list or watch: they are
 *   skipped, logged and counted (`stats().malformedValues`); a watch reports such a key as
 *   DELETED; get, update and patch of it are InternalErrors caused by a {@link MalformedValueError}.
 *
 * @example
 * import { Informer } from '@converge/runtime';
 * import { NatsBackend } from '@converge/nats';
 *
 * const widgets = { group: 'example.com', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true };
 * const backend = await NatsBackend.connect({ servers: 'nats://127.0.0.1:4222', types: [widgets] });
 * await backend.create(widgets, { metadata: { name: 'w', namespace: 'default' }, spec: { size: 1 } });
 * const informer = new Informer({ backend, type: widgets });
 * void informer.start(signal);
 * await informer.waitForSync(signal);
 * // …
 * await backend.close();
 *
 * @module
 */
export { MalformedValueError, NatsErrorCodes } from './errors.ts';
export type { GarbageCollectionResult } from './gc.ts';
export { decodeKey, defaultBucketName, encodeKey, isValidKvKey } from './keys.ts';
export {
  convergeCodec,
  type KvCodec,
  type KvCodecContext,
  type KvValueContext,
} from './kv-codec.ts';
export * from './lease/index.ts';
export { MarkerReplay, type MarkerReplayOptions, type MarkerReplayStats } from './marker-replay.ts';
export * from './membership/index.ts';
export {
  type CollectGarbageOptions,
  type GarbageCollectorOptions,
  NatsBackend,
  type NatsBackendStats,
} from './nats-backend.ts';
export type { DeleteMode, NatsBackendOptions } from './options.ts';
