import {
  AbortedError,
  apiVersionOf,
  isConvergeError,
  type KubeObject,
  type ListOptions,
  type ObjectList,
  parseShardSelector,
  type ResourceType,
} from '@converge/runtime';
import {
  type DecodedList,
  decodeListBody,
  METADATA_LIST_ACCEPT,
  metadataOnlyObject,
  withTypeMeta,
} from '../decode/index.ts';
import { ResponseDecodeError } from '../errors.ts';
import { type Transport, transportError } from '../http/index.ts';
import { resourcePath } from './paths.ts';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * One list request: selectors, `limit`, `continue`, `resourceVersion` and `resourceVersionMatch`
 * passed through as given; the body decoded with {@link decodeListBody} (item by item when large);
 * every item checked to be an object with metadata and given the type's apiVersion and kind (real
 * servers leave them out of built-in list items). With `metadataOnly` the server is asked for a
 * `meta.k8s.io/v1` PartialObjectMetadataList (the bodies never travel) and each item is handed out
 * as `{ apiVersion, kind, metadata }` of the type; a server that answers with full objects has them
 * projected on arrival, and an item that is neither is a `ResponseDecodeError`.
 *
 * A `shardSelector` (KEP-5866) is parsed first (malformed: a BadRequestError, nothing sent), sent
 * as the `shardSelector` parameter, and applied again to the items: a server without the
 * `ShardedListAndWatch` feature gate ignores the parameter and sends the whole collection, which
 * its missing `metadata.shardInfo` tells but the filter makes harmless. A page may then hold fewer
 * than `limit` items; the continue token stays the server's.
 *
 * @example
 * const page = await listObjects(transport, configMaps, { namespace: 'default', limit: 500 }, 16 << 20);
 */
export async function listObjects<T extends KubeObject>(
  transport: Transport,
  type: ResourceType,
  options: ListOptions,
  maxItemBytes: number,
): Promise<ObjectList<T>> {
  const { signal } = options;
  const shard =
    options.shardSelector === undefined || options.shardSelector === ''
      ? undefined
      : parseShardSelector(options.shardSelector);
  const response = await transport.send({
    method: 'GET',
    path: resourcePath(type, type.namespaced ? (options.namespace ?? '') : ''),
    query: {
      labelSelector: options.labelSelector,
      fieldSelector: options.fieldSelector,
      limit: options.limit === undefined ? undefined : String(options.limit),
      continue: options.continue,
      resourceVersion: options.resourceVersion,
      resourceVersionMatch: options.resourceVersionMatch,
      shardSelector: shard === undefined ? undefined : options.shardSelector,
    },
    ...(options.metadataOnly === true ? { accept: METADATA_LIST_ACCEPT } : {}),
    signal,
  });
  let decoded: DecodedList;
  try {
    decoded = await decodeListBody(response.body as AsyncIterable<Buffer>, maxItemBytes);
  } catch (error) {
    response.body.destroy();
    if (signal?.aborted === true) throw new AbortedError('list aborted', { cause: error });
    throw isConvergeError(error) ? error : transportError(`list ${type.plural}`, error);
  }
  const meta = { apiVersion: apiVersionOf(type), kind: type.kind };
  const metadataOnly = options.metadataOnly === true;
  const all = decoded.items.map((item, i) => {
    if (metadataOnly) return metadataOnlyObject<T>(item, meta, 'list', `items[${i}]`);
    if (!isObject(item) || !isObject(item.metadata)) {
      throw new ResponseDecodeError('list', `items[${i}]`, 'is not an object with metadata');
    }
    return withTypeMeta<T>(item, meta);
  });
  const items = shard === undefined ? all : all.filter((item) => shard.matches(item));
  const metadata = isObject(decoded.envelope.metadata) ? decoded.envelope.metadata : {};
  const { resourceVersion, continue: token, remainingItemCount } = metadata;
  if (typeof resourceVersion !== 'string') {
    throw new ResponseDecodeError('list', 'metadata.resourceVersion', 'is missing');
  }
  return {
    items,
    resourceVersion,
    ...(typeof token === 'string' && token !== '' ? { continue: token } : {}),
    ...(typeof remainingItemCount === 'number' ? { remainingItemCount } : {}),
  };
}
