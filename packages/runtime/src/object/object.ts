/** A reference from an object to its owner (Kubernetes `metav1.OwnerReference`). */
export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller?: boolean;
  readonly blockOwnerDeletion?: boolean;
}

/** Kubernetes-shaped object metadata, shared by every backend. */
export interface ObjectMeta {
  readonly name?: string;
  readonly generateName?: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly generation?: number;
  readonly creationTimestamp?: string;
  readonly deletionTimestamp?: string;
  readonly deletionGracePeriodSeconds?: number;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly finalizers?: readonly string[];
  readonly ownerReferences?: readonly OwnerReference[];
  readonly managedFields?: readonly unknown[];
}

/**
 * A Kubernetes-shaped object: `apiVersion`, `kind`, `metadata`. Your own types (`interface Website
 * extends KubeObject { spec: …; status?: … }`) are assignable to it.
 */
export interface KubeObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: ObjectMeta;
}

/** An object whose shape beyond `metadata` is not known (kubectl's "unstructured"). */
export interface UnstructuredObject extends KubeObject {
  readonly [field: string]: unknown;
}

/** The identity of an object within one kind: its namespace ('' when cluster-scoped) and name. */
export interface ObjectKey {
  readonly namespace: string;
  readonly name: string;
}

/** The key of an object: `{ namespace, name }`, with '' for cluster-scoped objects. */
export function objectKey(object: KubeObject): ObjectKey {
  return { namespace: object.metadata.namespace ?? '', name: object.metadata.name ?? '' };
}

/** `namespace/name`, or `name` for cluster-scoped objects (client-go's MetaNamespaceKeyFunc). */
export function keyToString(key: ObjectKey): string {
  return key.namespace === '' ? key.name : `${key.namespace}/${key.name}`;
}

/** Parses `namespace/name` or `name` back into a key. */
export function parseKey(text: string): ObjectKey {
  const slash = text.indexOf('/');
  return slash < 0
    ? { namespace: '', name: text }
    : { namespace: text.slice(0, slash), name: text.slice(slash + 1) };
}

/** The group of an apiVersion (`apps/v1` → `apps`, `v1` → ''). */
export function groupOf(apiVersion: string | undefined): string {
  if (apiVersion === undefined) return '';
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}
