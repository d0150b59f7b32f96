import type { ResourceType } from '../backend/index.ts';
import { AlreadyOwnedError, InvalidOwnerError } from '../client/index.ts';
import { OptionsError } from '../errors.ts';
import { groupOf, type KubeObject, keyToString, type ObjectKey, parseKey } from '../object/index.ts';
import { isHashedValue, labelValue } from './label-value.ts';
import {
  type OwnerKindFormat,
  type OwnerLabelScheme,
  resolveOwnerLabelScheme,
} from './owner-label-scheme.ts';

/** The kind of an owner: the group and kind of its resource type. */
export type OwnerKind = Pick<ResourceType, 'group' | 'kind'>;

/** The owner an object records in its labels and annotations. */
export interface LabelOwner {
  /**
   * The owner's API group ('' for the core group); absent when the scheme writes the kind alone
   * (`kindFormat: 'Kind'`, as {@link kumoriOwnerLabels} does).
   */
  readonly group?: string;
  readonly kind: string;
  /** The owner's key; namespace '' when the owner is cluster-scoped. */
  readonly key: ObjectKey;
  /** The owner's uid when it was recorded. */
  readonly uid?: string;
}

/** What {@link ownerLabels} returns: the labels to select by and the annotations to trust. */
export interface OwnerMetadata {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

const KIND = /^[A-Z][A-Za-z0-9]*$/;
/** A namespace or name that can appear as is inside a label value (no `_`: it is the separator). */
const KEY_PART = /^[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?$/;

/**
 * The labels and annotations that record `owner` (of type `ownerType`) as the owner of another
 * object, possibly in another backend, where owner references cannot point.
 *
 * - `converge.dev/owner-kind`: `Kind.group` (`Website.example.com`; `ConfigMap` for the core
 *   group). Kinds contain no `.`, so distinct (group, kind) pairs give distinct values.
 * - `converge.dev/owner-key`: `namespace_name`, or `name` for a cluster-scoped owner. Namespaces
 *   and names contain no `_`, so the value decodes back to exactly one key.
 *
 * A value longer than 63 characters, not a valid label value, or shaped like a hash is replaced
 * by `h-` and 40 base32 characters of the SHA-256 of the full text. The annotations of the same
 * names always hold the full kind and the full key (`namespace/name`), plus
 * `converge.dev/owner-uid` when the owner has a uid: they are authoritative, the labels are for
 * selection.
 *
 * `scheme` (default {@link convergeOwnerLabels}) names the labels and annotations, and may write
 * the kind alone (`kindFormat: 'Kind'`); the encoding of the values is the same for every scheme.
 *
 * Throws {@link InvalidOwnerError} when the owner has no name, a name or namespace with `/`, a
 * namespace that does not match its type's scope, or an apiVersion / kind of another type, and an
 * OptionsError for a bad scheme.
 *
 * @example
 * ownerLabels(websiteType, site);
 * // { labels: { 'converge.dev/owner-kind': 'Website.example.com', 'converge.dev/owner-key': 'default_blog' },
 * //   annotations: { 'converge.dev/owner-kind': 'Website.example.com', 'converge.dev/owner-key': 'default/blog',
 * //                  'converge.dev/owner-uid': '6f1c…' } }
 */
export function ownerLabels(
  ownerType: ResourceType,
  owner: KubeObject,
  scheme?: OwnerLabelScheme,
): OwnerMetadata {
  const s = resolveOwnerLabelScheme(scheme);
  const kind = kindText(checkOwnerKind(ownerType), s.kindFormat);
  if (typeof ownerType.namespaced !== 'boolean') {
    throw new OptionsError('ownerType.namespaced', ownerType.namespaced, 'a boolean');
  }
  const key = ownerKeyOf(ownerType, owner);
  const uid = owner.metadata.uid;
  const recordUid = s.uidAnnotation !== undefined && typeof uid === 'string' && uid !== '';
  return {
    labels: { [s.kindLabel]: labelValue(kind, kind), [s.keyLabel]: keyLabelValue(key) },
    annotations: {
      [s.kindAnnotation]: kind,
      [s.keyAnnotation]: keyToString(key),
      ...(recordUid ? { [s.uidAnnotation as string]: uid } : {}),
    },
  };
}

/**
 * Returns a copy of `object` labelled and annotated as owned by `owner` ({@link ownerLabels}),
 * like the client's `setControllerReference` for owners in another backend. Recording the same
 * owner again refreshes its uid (adoption by a re-created owner). Throws {@link AlreadyOwnedError}
 * if the object records another owner (remove it first with {@link removeOwnerLabels}). `scheme`
 * as in {@link ownerLabels}.
 *
 * @example
 * await createOrUpdate(kubeClient, configMapType, skeleton, (cm) =>
 *   setOwnerLabels({ ...cm, data: render(site) }, websiteType, site),
 * );
 */
export function setOwnerLabels<T extends KubeObject>(
  object: T,
  ownerType: ResourceType,
  owner: KubeObject,
  scheme?: OwnerLabelScheme,
): T {
  const s = resolveOwnerLabelScheme(scheme);
  const wanted = ownerLabels(ownerType, owner, s);
  const labels = object.metadata.labels ?? {};
  const annotations = object.metadata.annotations ?? {};
  // Another owner is recorded when any owner label or annotation present differs from ours.
  const differs =
    (recorded: Readonly<Record<string, string>>, ours: Readonly<Record<string, string>>) => (name: string) =>
      recorded[name] !== undefined && recorded[name] !== ours[name];
  const other =
    [s.kindLabel, s.keyLabel].some(differs(labels, wanted.labels)) ||
    [s.kindAnnotation, s.keyAnnotation].some(differs(annotations, wanted.annotations));
  if (other) {
    throw new AlreadyOwnedError(keyToString(objectKeyOf(object)), {
      kind: annotations[s.kindAnnotation] ?? labels[s.kindLabel] ?? '',
      name: annotations[s.keyAnnotation] ?? labels[s.keyLabel] ?? '',
    });
  }
  const keptAnnotations = { ...annotations };
  if (s.uidAnnotation !== undefined) delete keptAnnotations[s.uidAnnotation];
  return {
    ...object,
    metadata: {
      ...object.metadata,
      labels: { ...labels, ...wanted.labels },
      annotations: { ...keptAnnotations, ...wanted.annotations },
    },
  };
}

/**
 * Returns a copy of `object` without the owner labels and annotations of `scheme` (default
 * {@link convergeOwnerLabels}); the object itself if it has none.
 */
export function removeOwnerLabels<T extends KubeObject>(object: T, scheme?: OwnerLabelScheme): T {
  const s = resolveOwnerLabelScheme(scheme);
  const labelNames = [s.kindLabel, s.keyLabel];
  const annotationNames = [s.kindAnnotation, s.keyAnnotation, s.uidAnnotation];
  const labels = object.metadata.labels ?? {};
  const annotations = object.metadata.annotations ?? {};
  const has =
    labelNames.some((n) => n in labels) || annotationNames.some((n) => n !== undefined && n in annotations);
  if (!has) return object;
  const keptLabels = Object.fromEntries(
    Object.entries(labels).filter(([name]) => !labelNames.includes(name)),
  );
  const keptAnnotations = Object.fromEntries(
    Object.entries(annotations).filter(([name]) => !annotationNames.includes(name)),
  );
  return { ...object, metadata: { ...object.metadata, labels: keptLabels, annotations: keptAnnotations } };
}

/**
 * The owner `object` records, or undefined. Both owner labels must be present. When the
 * annotations are there they are authoritative, and they must agree with the labels (an object
 * whose labels and annotations disagree has no owner as far as Converge is concerned, so it is
 * never collected); without them the labels are decoded, which works unless they were hashed.
 * `scheme` (default {@link convergeOwnerLabels}) says where to look; with `kindFormat: 'Kind'` the
 * owner has no `group`.
 *
 * @example
 * const owner = ownerOf(configMap); // { group: 'example.com', kind: 'Website', key: { namespace: 'default', name: 'blog' }, uid: '…' }
 * ownerOf(kumoriLabelled, kumoriOwnerLabels); // { kind: 'Application', key: { namespace: 'default', name: 'hello' } }
 */
export function ownerOf(object: KubeObject, scheme?: OwnerLabelScheme): LabelOwner | undefined {
  const s = resolveOwnerLabelScheme(scheme);
  const labels = object.metadata?.labels ?? {};
  const annotations = object.metadata?.annotations ?? {};
  const kindLabel = labels[s.kindLabel];
  const keyLabel = labels[s.keyLabel];
  if (kindLabel === undefined || keyLabel === undefined) return undefined;
  const kindAnnotation = annotations[s.kindAnnotation];
  const keyAnnotation = annotations[s.keyAnnotation];
  let owner: { group?: string; kind: string; key: ObjectKey } | undefined;
  if (s.parseKey !== undefined) {
    const kind = parseKind(kindAnnotation ?? kindLabel, s.kindFormat);
    const key = customKey(s.parseKey, keyLabel, keyAnnotation);
    if (kind === undefined || key === undefined) return undefined;
    if (kindAnnotation !== undefined) {
      const text = kindText(kind, s.kindFormat);
      if (labelValue(text, text) !== kindLabel) return undefined;
    }
    owner = { ...kind, key };
  } else if (kindAnnotation !== undefined || keyAnnotation !== undefined) {
    const kind = kindAnnotation === undefined ? undefined : parseKind(kindAnnotation, s.kindFormat);
    const key = keyAnnotation === undefined ? undefined : parseFullKey(keyAnnotation);
    if (kind === undefined || key === undefined) return undefined;
    const text = kindText(kind, s.kindFormat);
    if (labelValue(text, text) !== kindLabel || keyLabelValue(key) !== keyLabel) return undefined;
    owner = { ...kind, key };
  } else {
    if (isHashedValue(kindLabel) || isHashedValue(keyLabel)) return undefined;
    const kind = parseKind(kindLabel, s.kindFormat);
    const key = parseKeyLabel(keyLabel);
    if (kind === undefined || key === undefined) return undefined;
    owner = { ...kind, key };
  }
  const uid = s.uidAnnotation === undefined ? undefined : annotations[s.uidAnnotation];
  return uid === undefined || uid === '' ? owner : { ...owner, uid };
}

/**
 * Converge's reading of an owner key (the default of {@link OwnerLabelScheme.parseKey}): a label
 * `namespace_name` or `name` (cluster-scoped), an annotation `namespace/name` or `name`; undefined
 * for anything else, hashed labels included (only the annotation can tell their key).
 *
 * @example
 * parseOwnerKey('default_hello', 'label'); // { namespace: 'default', name: 'hello' }
 * parseOwnerKey('default/hello', 'annotation'); // { namespace: 'default', name: 'hello' }
 */
export function parseOwnerKey(value: string, source: 'label' | 'annotation'): ObjectKey | undefined {
  if (typeof value !== 'string') return undefined;
  if (source === 'annotation') return parseFullKey(value);
  return isHashedValue(value) ? undefined : parseKeyLabel(value);
}

/** The key a custom parser reads from the annotation (else the label); never throws. */
function customKey(
  parse: NonNullable<OwnerLabelScheme['parseKey']>,
  label: string,
  annotation: string | undefined,
): ObjectKey | undefined {
  const read = (value: string, source: 'label' | 'annotation'): ObjectKey | undefined => {
    let namespace: unknown;
    let name: unknown;
    try {
      const key: unknown = parse(value, source);
      if (typeof key !== 'object' || key === null) return undefined;
      ({ namespace = '', name } = key as { namespace?: unknown; name?: unknown });
    } catch {
      return undefined;
    }
    if (typeof namespace !== 'string' || namespace.includes('/')) return undefined;
    if (typeof name !== 'string' || name === '' || name.includes('/')) return undefined;
    return { namespace, name };
  };
  const fromLabel = read(label, 'label');
  if (annotation === undefined) return fromLabel;
  const fromAnnotation = read(annotation, 'annotation');
  if (fromAnnotation === undefined) return undefined;
  // A label Converge hashed must be the hash of the annotation's key.
  if (fromLabel === undefined && isHashedValue(label) && keyLabelValue(fromAnnotation) !== label)
    return undefined;
  if (
    fromLabel !== undefined &&
    (fromLabel.namespace !== fromAnnotation.namespace || fromLabel.name !== fromAnnotation.name)
  )
    return undefined;
  return fromAnnotation;
}

/** Whether `owner` (as {@link ownerOf} decoded it) is of kind `ownerType`; no recorded group matches any. */
export function recordsKind(owner: LabelOwner, ownerType: OwnerKind): boolean {
  return owner.kind === ownerType.kind && (owner.group === undefined || owner.group === ownerType.group);
}

/**
 * Whether `object` records `owner` (an object or a key) of kind `ownerType` as its owner, in the
 * labels of `scheme` (default {@link convergeOwnerLabels}). When both the recorded owner and
 * `owner` have a uid, they must be equal too.
 */
export function isOwnedBy(
  object: KubeObject,
  ownerType: OwnerKind,
  owner: KubeObject | ObjectKey,
  scheme?: OwnerLabelScheme,
): boolean {
  const recorded = ownerOf(object, scheme);
  if (recorded === undefined || !recordsKind(recorded, checkOwnerKind(ownerType))) return false;
  const isObject = 'metadata' in owner;
  const key = isObject ? objectKeyOf(owner) : owner;
  if (recorded.key.namespace !== key.namespace || recorded.key.name !== key.name) return false;
  const uid = isObject ? owner.metadata.uid : undefined;
  return recorded.uid === undefined || uid === undefined || uid === '' || recorded.uid === uid;
}

/**
 * The label selector of objects owned by any object of kind `ownerType`:
 * `converge.dev/owner-kind=<value>` (the kind label of `scheme`). Informers of label-owned kinds
 * use it so they cache only owned objects.
 */
export function ownedByKindSelector(ownerType: OwnerKind, scheme?: OwnerLabelScheme): string {
  const s = resolveOwnerLabelScheme(scheme);
  const kind = kindText(checkOwnerKind(ownerType), s.kindFormat);
  return `${s.kindLabel}=${labelValue(kind, kind)}`;
}

/**
 * The label selector of objects owned by `owner` (an object or a key; namespace '' for a
 * cluster-scoped owner). When a value was hashed it could in theory match another owner's
 * objects: confirm with {@link isOwnedBy} when that matters.
 *
 * @example
 * const mine = await kube.list(configMapType, { labelSelector: ownedBySelector(websiteType, key) });
 */
export function ownedBySelector(
  ownerType: OwnerKind,
  owner: KubeObject | ObjectKey,
  scheme?: OwnerLabelScheme,
): string {
  const s = resolveOwnerLabelScheme(scheme);
  const key = 'metadata' in owner ? objectKeyOf(owner) : owner;
  checkKey(key);
  return `${ownedByKindSelector(ownerType, s)},${s.keyLabel}=${keyLabelValue(key)}`;
}

/** Validates the group and kind of an owner type; throws {@link OptionsError}. */
export function checkOwnerKind(ownerType: OwnerKind): OwnerKind {
  if (typeof ownerType !== 'object' || ownerType === null) {
    throw new OptionsError('ownerType', ownerType, 'a resource type with group and kind');
  }
  if (typeof ownerType.kind !== 'string' || !KIND.test(ownerType.kind)) {
    throw new OptionsError('ownerType.kind', ownerType.kind, 'a PascalCase kind such as Website');
  }
  if (typeof ownerType.group !== 'string') {
    throw new OptionsError('ownerType.group', ownerType.group, "a string ('' for the core group)");
  }
  return ownerType;
}

/** The kind as `format` writes it: `Kind.group` (`Kind` for the core group), or `Kind` alone. */
function kindText(
  { group, kind }: { readonly group?: string; readonly kind: string },
  format: OwnerKindFormat,
): string {
  return format === 'Kind' || group === undefined || group === '' ? kind : `${kind}.${group}`;
}

function parseKind(text: string, format: OwnerKindFormat): { group?: string; kind: string } | undefined {
  if (format === 'Kind') return KIND.test(text) ? { kind: text } : undefined;
  const dot = text.indexOf('.');
  const kind = dot < 0 ? text : text.slice(0, dot);
  const group = dot < 0 ? '' : text.slice(dot + 1);
  if (!KIND.test(kind) || (dot >= 0 && group === '')) return undefined;
  return { group, kind };
}

function keyLabelValue(key: ObjectKey): string {
  const { namespace, name } = key;
  const plain =
    KEY_PART.test(name) && (namespace === '' || KEY_PART.test(namespace))
      ? namespace === ''
        ? name
        : `${namespace}_${name}`
      : undefined;
  return labelValue(plain, keyToString(key));
}

function parseKeyLabel(value: string): ObjectKey | undefined {
  const parts = value.split('_');
  if (parts.length === 1) return KEY_PART.test(value) ? { namespace: '', name: value } : undefined;
  const [namespace, name] = parts;
  if (parts.length !== 2 || namespace === undefined || name === undefined) return undefined;
  return KEY_PART.test(namespace) && KEY_PART.test(name) ? { namespace, name } : undefined;
}

function parseFullKey(text: string): ObjectKey | undefined {
  const key = parseKey(text);
  return key.name === '' || key.name.includes('/') ? undefined : key;
}

function objectKeyOf(object: KubeObject): ObjectKey {
  return { namespace: object.metadata?.namespace ?? '', name: object.metadata?.name ?? '' };
}

function checkKey(key: ObjectKey): void {
  if (typeof key !== 'object' || key === null)
    throw new InvalidOwnerError('owner must be an object or a key');
  const { namespace, name } = key;
  if (typeof name !== 'string' || name === '' || name.includes('/')) {
    throw new InvalidOwnerError(
      `owner name must be a non-empty string without '/', got ${JSON.stringify(name)}`,
    );
  }
  if (typeof namespace !== 'string' || namespace.includes('/')) {
    throw new InvalidOwnerError(
      `owner namespace must be a string without '/', got ${JSON.stringify(namespace)}`,
    );
  }
}

function ownerKeyOf(ownerType: ResourceType, owner: KubeObject): ObjectKey {
  if (
    typeof owner !== 'object' ||
    owner === null ||
    typeof owner.metadata !== 'object' ||
    owner.metadata === null
  ) {
    throw new InvalidOwnerError('owner must be an object with metadata');
  }
  const key = objectKeyOf(owner);
  checkKey(key);
  if (ownerType.namespaced && key.namespace === '') {
    throw new InvalidOwnerError(
      `owner ${ownerType.kind} ${key.name} must have a namespace: its kind is namespaced`,
    );
  }
  if (!ownerType.namespaced && key.namespace !== '') {
    throw new InvalidOwnerError(
      `owner ${ownerType.kind} ${key.name} must not have a namespace: its kind is cluster-scoped`,
    );
  }
  if (owner.kind !== undefined && owner.kind !== ownerType.kind) {
    throw new InvalidOwnerError(`owner is a ${owner.kind}, not a ${ownerType.kind}`);
  }
  if (owner.apiVersion !== undefined && groupOf(owner.apiVersion) !== ownerType.group) {
    throw new InvalidOwnerError(
      `owner apiVersion ${owner.apiVersion} is not in group ${JSON.stringify(ownerType.group)}`,
    );
  }
  return key;
}
