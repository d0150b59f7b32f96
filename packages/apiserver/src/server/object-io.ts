import { BadRequestError, type KubeObject } from '@converge/runtime';
import { type ApiResource, groupVersion, type JsonObject, type MutableObject } from './api-resource.ts';
import { readBodyValue, requireObject } from './body.ts';
import type { RequestContext } from './context.ts';
import { asObject, cloneJson } from './json-util.ts';
import { omitEmpty } from './omitempty.ts';

/** The stored object as `resource` serves it (a fresh, mutable copy). */
export async function fromStorage(resource: ApiResource, stored: KubeObject): Promise<MutableObject> {
  return cloneJson(await toResponse(resource, stored)) as MutableObject;
}

/**
 * The stored object as `resource` serves it, for a response body only: not copied (the store's
 * objects are frozen, and encoding reads them), so a write's answer costs one encode, not a deep
 * copy of the object first. Rejects when a conversion webhook fails.
 */
export async function toResponse(resource: ApiResource, stored: KubeObject): Promise<unknown> {
  return resource.converter === undefined ? stored : await resource.converter.fromStorage(stored);
}

/**
 * Stored objects as `resource` serves them, converted together (one conversion webhook call for
 * a list, as kube-apiserver converts a list). Not copied.
 */
export async function manyToResponse(
  resource: ApiResource,
  stored: readonly KubeObject[],
): Promise<readonly unknown[]> {
  const converter = resource.converter;
  if (converter === undefined || stored.length === 0) return stored;
  if (converter.fromStorageMany !== undefined) return converter.fromStorageMany(stored);
  const out: unknown[] = [];
  for (const object of stored) out.push(await converter.fromStorage(object));
  return out;
}

/** The stored object as `resource` serves it (not copied), typed as an object of the store. */
export async function servedObject(resource: ApiResource, stored: KubeObject): Promise<KubeObject> {
  return (await toResponse(resource, stored)) as KubeObject;
}

/** A served-shape object as the store keeps it. Rejects when a conversion webhook fails. */
export async function toStorage(resource: ApiResource, object: JsonObject): Promise<KubeObject> {
  const stored = resource.converter === undefined ? object : await resource.converter.toStorage(object);
  omitEmpty(resource, stored);
  return stored as unknown as KubeObject;
}

/** Reads and decodes the request body (JSON, YAML, protobuf) into a JSON object; 400/413/415 otherwise. */
export async function readObjectBody(ctx: RequestContext): Promise<JsonObject> {
  const decode = ctx.server.extensions.decodeProtobuf;
  const expected = { apiVersion: groupVersion(ctx.resource), kind: ctx.resource.kind };
  const protobuf = decode === undefined ? undefined : (bytes: Uint8Array): unknown => decode(bytes, expected);
  return requireObject(await readBodyValue(ctx.req, protobuf));
}

/**
 * Checks a body against the endpoint as kube-apiserver does and fills what it may leave out:
 * `apiVersion` and `kind` must match the endpoint (400 otherwise; absent → set), `metadata` must be
 * an object, the namespace must equal the request's (400 `the namespace of the provided object does
 * not match the namespace sent on the request`; empty → the request's; cluster-scoped → cleared),
 * and for PUT the name must equal the URL's (400).
 */
export function checkIdentity(ctx: RequestContext, object: JsonObject, urlName?: string): MutableObject {
  const { resource, target } = ctx;
  const expected = groupVersion(resource);
  const apiVersion = object.apiVersion;
  if (apiVersion !== undefined && apiVersion !== '' && apiVersion !== expected) {
    throw new BadRequestError(
      `the API version in the data (${String(apiVersion)}) does not match the expected API version (${expected})`,
    );
  }
  const kind = object.kind;
  if (kind !== undefined && kind !== '' && kind !== resource.kind) {
    throw new BadRequestError(
      `the kind in the data (${String(kind)}) does not match the expected kind (${resource.kind})`,
    );
  }
  object.apiVersion = expected;
  object.kind = resource.kind;
  if (object.metadata === undefined || object.metadata === null) object.metadata = {};
  const meta = asObject(object.metadata);
  if (meta === undefined)
    throw new BadRequestError('unable to decode the object: metadata must be an object');
  if (resource.namespaced) {
    const namespace = meta.namespace;
    if (namespace === undefined || namespace === null || namespace === '') meta.namespace = target.namespace;
    else if (namespace !== target.namespace) {
      throw new BadRequestError(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
  } else {
    delete meta.namespace;
  }
  if (urlName !== undefined) {
    const name = meta.name;
    if (name === undefined || name === null || name === '') meta.name = urlName;
    else if (name !== urlName) {
      throw new BadRequestError(
        `the name of the object (${String(name)}) does not match the name on the URL (${urlName})`,
      );
    }
  }
  return object as MutableObject;
}
