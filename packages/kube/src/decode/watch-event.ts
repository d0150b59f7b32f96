import type { KubeObject, WatchEvent } from '@converge/runtime';
import { ResponseDecodeError } from '../errors.ts';
import { errorFromStatus, isStatus } from '../http/index.ts';
import { metadataOnlyObject } from './metadata-only.ts';

/** The annotation on the BOOKMARK that ends a `sendInitialEvents` watch's initial events. */
export const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

const WHAT = 'watch event';

/** apiVersion and kind to fill in where an object lacks them. */
export interface TypeMeta {
  readonly apiVersion: string;
  readonly kind: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Sets apiVersion and kind on an object decoded for `type` when the server left them out.
 *
 * @example
 * withTypeMeta({ metadata: { name: 'a' } }, { apiVersion: 'v1', kind: 'ConfigMap' }); // apiVersion and kind set
 */
export function withTypeMeta<T extends KubeObject>(object: Record<string, unknown>, type: TypeMeta): T {
  if (object.apiVersion === undefined || object.apiVersion === '') object.apiVersion = type.apiVersion;
  if (object.kind === undefined || object.kind === '') object.kind = type.kind;
  return object as unknown as T;
}

/**
 * Decodes one line of a Kubernetes watch stream (`{"type": …, "object": …}`) into a
 * {@link WatchEvent}. An ERROR event throws the typed error of its `metav1.Status` (410 →
 * `ExpiredError`); anything malformed throws a `ResponseDecodeError` naming the field. With
 * `metadataOnly`, objects are reduced to `{ apiVersion, kind, metadata }` of `type` (see
 * {@link metadataOnlyObject}: a PartialObjectMetadata or a full object of the kind, nothing else).
 *
 * @example
 * const event = decodeWatchEvent('{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"7"}}}', meta);
 * // { type: 'BOOKMARK', resourceVersion: '7' }
 */
export function decodeWatchEvent<T extends KubeObject>(
  line: string,
  type: TypeMeta,
  metadataOnly = false,
): WatchEvent<T> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (error) {
    throw new ResponseDecodeError(WHAT, '(line)', `is not JSON: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (!isObject(parsed)) throw new ResponseDecodeError(WHAT, '(line)', 'is not a JSON object');
  const eventType = parsed.type;
  const object = parsed.object;
  if (!isObject(object)) throw new ResponseDecodeError(WHAT, 'object', 'is not an object');
  switch (eventType) {
    case 'ERROR':
      if (!isStatus(object))
        throw new ResponseDecodeError(WHAT, 'object', 'of an ERROR event is not a Status');
      throw errorFromStatus(object);
    case 'BOOKMARK': {
      const metadata = object.metadata;
      const resourceVersion = isObject(metadata) ? metadata.resourceVersion : undefined;
      if (typeof resourceVersion !== 'string' || resourceVersion === '') {
        throw new ResponseDecodeError(WHAT, 'object.metadata.resourceVersion', 'of a BOOKMARK is missing');
      }
      const annotations = isObject(metadata) ? metadata.annotations : undefined;
      const end = isObject(annotations) && annotations[INITIAL_EVENTS_END] === 'true';
      return end
        ? { type: 'BOOKMARK', resourceVersion, initialEventsEnd: true }
        : { type: 'BOOKMARK', resourceVersion };
    }
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED':
      if (metadataOnly)
        return { type: eventType, object: metadataOnlyObject<T>(object, type, WHAT, 'object') };
      if (!isObject(object.metadata))
        throw new ResponseDecodeError(WHAT, 'object.metadata', 'is not an object');
      return { type: eventType, object: withTypeMeta<T>(object, type) };
    default:
      throw new ResponseDecodeError(
        WHAT,
        'type',
        `is not ADDED, MODIFIED, DELETED, BOOKMARK or ERROR: ${JSON.stringify(eventType)}`,
      );
  }
}
