import {
  apiVersionOf,
  BadRequestError,
  type DeleteOptions,
  type DeleteResult,
  InvalidError,
  type KubeObject,
  type ObjectKey,
  type Patch,
  type ResourceType,
} from '@converge/runtime';
import { withTypeMeta } from '../decode/index.ts';
import { ResponseDecodeError } from '../errors.ts';
import { isStatus } from '../http/index.ts';

/** The Content-Type of each patch type. */
export const PATCH_CONTENT_TYPES: Readonly<Record<Patch['type'], string>> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

/**
 * The namespace an object of `type` lives in: the object's, or the default one; '' when cluster-scoped.
 *
 * @example
 * namespaceFor(configMaps, undefined, 'default'); // 'default'
 */
export function namespaceFor(type: ResourceType, namespace: string | undefined, fallback: string): string {
  if (!type.namespaced) {
    if (namespace !== undefined && namespace !== '') {
      throw new BadRequestError(
        `${type.kind} is cluster-scoped: the object cannot have a namespace (got ${JSON.stringify(namespace)})`,
      );
    }
    return '';
  }
  return namespace === undefined || namespace === '' ? fallback : namespace;
}

/**
 * The name of an object to write by name (update), or an InvalidError like the server's.
 *
 * @example
 * const name = nameOf(configMaps, object); // throws InvalidError on metadata.name when missing
 */
export function nameOf(type: ResourceType, object: KubeObject): string {
  const name = object.metadata?.name;
  if (typeof name === 'string' && name !== '') return name;
  throw new InvalidError(`${type.kind} is invalid: metadata.name: Required value: name is required`, {
    details: {
      kind: type.kind,
      causes: [
        { reason: 'FieldValueRequired', message: 'Required value: name is required', field: 'metadata.name' },
      ],
    },
  });
}

/**
 * The JSON body of a create or update: the object with its type's apiVersion and kind filled in.
 *
 * @example
 * objectBody(configMaps, { metadata: { name: 'a' } }); // '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}'
 */
export function objectBody(type: ResourceType, object: KubeObject): string {
  const { apiVersion, kind, ...rest } = object as KubeObject & Record<string, unknown>;
  return JSON.stringify({ apiVersion: apiVersion ?? apiVersionOf(type), kind: kind ?? type.kind, ...rest });
}

/**
 * The body of a patch; an apply patch gets apiVersion, kind, name and namespace when it lacks them.
 *
 * @example
 * patchBody(configMaps, { namespace: 'ns', name: 'a' }, 'ns', { type: 'apply', patch: { data: { k: 'v' } } });
 */
export function patchBody(type: ResourceType, key: ObjectKey, namespace: string, patch: Patch): string {
  if (patch.type !== 'apply') return JSON.stringify(patch.patch);
  const body = { ...(patch.patch as Record<string, unknown>) };
  body.apiVersion ??= apiVersionOf(type);
  body.kind ??= type.kind;
  const metadata = { ...((body.metadata as Record<string, unknown> | undefined) ?? {}) };
  metadata.name ??= key.name;
  if (namespace !== '') metadata.namespace ??= namespace;
  body.metadata = metadata;
  return JSON.stringify(body);
}

/**
 * A `meta.k8s.io` DeleteOptions body (propagation defaults to Background, as the contract says).
 *
 * @example
 * deleteBody({ propagationPolicy: 'Foreground', preconditions: { uid } });
 */
export function deleteBody(options: DeleteOptions): string {
  const { preconditions, gracePeriodSeconds } = options;
  return JSON.stringify({
    kind: 'DeleteOptions',
    apiVersion: 'v1',
    propagationPolicy: options.propagationPolicy ?? 'Background',
    ...(preconditions === undefined ? {} : { preconditions }),
    ...(gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds }),
    ...(options.dryRun === true ? { dryRun: ['All'] } : {}),
  });
}

/**
 * What a DELETE answered: a `Status` means the object is gone; an object means it is gone too
 * (kinds that return the deleted object) unless its deletion is pending — a deletionTimestamp with
 * finalizers left or a grace period running, or 202 Accepted.
 *
 * @example
 * deleteResult(configMaps, 200, { kind: 'Status', status: 'Success' }); // { status: 'deleted' }
 */
export function deleteResult<T extends KubeObject>(
  type: ResourceType,
  httpStatus: number,
  body: unknown,
): DeleteResult<T> {
  if (isStatus(body)) return { status: 'deleted' };
  if (typeof body !== 'object' || body === null || typeof (body as KubeObject).metadata !== 'object') {
    throw new ResponseDecodeError('delete response', '(body)', 'is neither a Status nor an object');
  }
  const object = withTypeMeta<T>(body as Record<string, unknown>, {
    apiVersion: apiVersionOf(type),
    kind: type.kind,
  });
  const { deletionTimestamp, finalizers, deletionGracePeriodSeconds } = object.metadata;
  const pending =
    httpStatus === 202 ||
    (deletionTimestamp !== undefined &&
      ((finalizers?.length ?? 0) > 0 || (deletionGracePeriodSeconds ?? 0) > 0));
  return pending ? { status: 'pending', object } : { status: 'deleted' };
}
