import { type KubeObject, PARTIAL_OBJECT_METADATA } from '@converge/runtime';
import { ResponseDecodeError } from '../errors.ts';
import type { TypeMeta } from './watch-event.ts';

/**
 * `Accept` of a metadata-only list: a `meta.k8s.io/v1` PartialObjectMetadataList, else (a server
 * that does not know the conversion) the plain list, projected on arrival. client-go's metadata
 * client asks the same (with protobuf first).
 */
export const METADATA_LIST_ACCEPT =
  'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';

/** `Accept` of a metadata-only get or watch: each object as a `meta.k8s.io/v1` PartialObjectMetadata. */
export const METADATA_OBJECT_ACCEPT =
  'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

/** The versions a server may write a PartialObjectMetadata in (`v1beta1` by older servers). */
const PARTIAL_API_VERSIONS: ReadonlySet<unknown> = new Set([
  PARTIAL_OBJECT_METADATA.apiVersion,
  'meta.k8s.io/v1beta1',
]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isUnset(value: unknown): boolean {
  return value === undefined || value === '';
}

/**
 * One object of a metadata-only answer as Converge hands it out: `{ apiVersion, kind, metadata }`
 * with the read kind's apiVersion and kind (controller-runtime sets the watched kind back on
 * PartialObjectMetadata too). The server may answer with a `meta.k8s.io` PartialObjectMetadata
 * (kube-apiserver does for `as=PartialObjectMetadata(List)`) or with the full object (a server that
 * ignores `as=`): the full object is projected here, its body dropped. Anything else — another kind,
 * no metadata object — is a {@link ResponseDecodeError} naming the field: nothing is guessed.
 *
 * @example
 * metadataOnlyObject({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata }, { apiVersion: 'v1', kind: 'Pod' }, 'list', 'items[0]');
 * // { apiVersion: 'v1', kind: 'Pod', metadata }
 */
export function metadataOnlyObject<T extends KubeObject>(
  object: unknown,
  type: TypeMeta,
  what: string,
  field: string,
): T {
  if (!isObject(object)) throw new ResponseDecodeError(what, field, 'is not an object');
  const { kind, apiVersion, metadata } = object;
  const partial = kind === PARTIAL_OBJECT_METADATA.kind && PARTIAL_API_VERSIONS.has(apiVersion);
  const full =
    (isUnset(kind) || kind === type.kind) && (isUnset(apiVersion) || apiVersion === type.apiVersion);
  if (!partial && !full) {
    throw new ResponseDecodeError(
      what,
      `${field}.kind`,
      `is ${JSON.stringify(kind)} (${JSON.stringify(apiVersion)}), neither a meta.k8s.io PartialObjectMetadata nor a ${type.kind} (${type.apiVersion})`,
    );
  }
  if (!isObject(metadata)) throw new ResponseDecodeError(what, `${field}.metadata`, 'is not an object');
  return { apiVersion: type.apiVersion, kind: type.kind, metadata } as unknown as T;
}
