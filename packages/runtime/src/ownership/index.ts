/**
 * Ownership across backends: a controller whose primary kind lives in one backend (NATS KV, say)
 * owns objects in another (Kubernetes, or another NATS bucket). Owner references cannot point
 * across backends, so the owner travels as labels, as in Kumori's controller runtime:
 *
 * - {@link ownerLabels}, {@link setOwnerLabels}, {@link removeOwnerLabels}, {@link ownerOf},
 *   {@link isOwnedBy}: the labels `converge.dev/owner-kind` (`Kind.group`) and
 *   `converge.dev/owner-key` (`namespace_name`), hashed (`h-…`) when a value would not be a valid
 *   label value, and the annotations of the same names (plus `converge.dev/owner-uid`) that keep
 *   the full kind, key and uid. Annotations are authoritative; labels are for selection.
 * - {@link OwnerLabelScheme}: other label and annotation names, given to every function and
 *   option above as `ownerLabels`; {@link convergeOwnerLabels} is the default and
 *   {@link kumoriOwnerLabels} reads and writes Kumori's `kumori/ownerkind` (the kind alone) and
 *   `kumori/ownerkey`. `parseKey` reads keys another program wrote in its own format
 *   ({@link parseOwnerKey} is Converge's reading).
 * - {@link ownedByKindSelector}, {@link ownedBySelector}: label selectors of the objects a kind or
 *   one owner owns.
 * - {@link enqueueForLabelOwner}: an event handler that maps an owned object's events to its
 *   owner's request (the cross-backend `enqueueForOwner`). The builder uses it for
 *   `owns(type, { backend })` when `backend` is not the primary's, or with `ownership: 'labels'`.
 * - {@link OrphanCollector} and {@link collectOrphans}: a leader-gated runnable that, once every
 *   cache has synced and then periodically, deletes owned objects whose owner no longer exists —
 *   after confirming with a live read of the owner, with uid and resourceVersion preconditions,
 *   and never on doubt.
 *
 * @example
 * const manager = new Manager({ backend: nats }); // Websites live in NATS
 * manager
 *   .controller(websiteType)
 *   .owns(configMapType, { backend: kube }) // another backend: ownership by labels
 *   .complete(async (key) => {
 *     const site = await manager.client.get<Website>(websiteType, key);
 *     await createOrUpdate(kubeClient, configMapType, skeletonFor(site), (cm) =>
 *       setOwnerLabels({ ...cm, data: render(site) }, websiteType, site),
 *     );
 *     return done();
 *   });
 * collectOrphans(manager, { ownerType: websiteType, secondaries: [{ type: configMapType, backend: kube }] });
 * await manager.start(signal);
 *
 * @module
 */
export { type CollectOrphansOptions, collectOrphans, type OrphanCollectorHost } from './collect-orphans.ts';
export { type EnqueueForLabelOwnerOptions, enqueueForLabelOwner } from './enqueue-for-label-owner.ts';
export { OrphanCollector } from './orphan-collector.ts';
export type {
  OrphanCollectorOptions,
  OrphanCollectorStats,
  OrphanRound,
  OrphanSecondary,
} from './orphan-collector-options.ts';
export {
  convergeOwnerLabels,
  kumoriOwnerLabels,
  OWNER_KEY_LABEL,
  OWNER_KIND_LABEL,
  OWNER_UID_ANNOTATION,
  type OwnerKeyParser,
  type OwnerKindFormat,
  type OwnerLabelScheme,
} from './owner-label-scheme.ts';
export {
  isOwnedBy,
  type LabelOwner,
  type OwnerKind,
  type OwnerMetadata,
  ownedByKindSelector,
  ownedBySelector,
  ownerLabels,
  ownerOf,
  parseOwnerKey,
  removeOwnerLabels,
  setOwnerLabels,
} from './owner-labels.ts';
