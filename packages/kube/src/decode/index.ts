/**
 * Incremental decoding of Kubernetes responses: watch streams split into lines with a cap on line
 * size, list responses split into items as they arrive, managedFields cut out of a watch line
 * unparsed, and a cooperator that lets long decodes share the event loop.
 *
 * @module
 */
export { Cooperator, SLICE_MS } from './cooperate.ts';
export { LineDecoder } from './line-decoder.ts';
export { type DecodedList, decodeListBody, WHOLE_PARSE_BYTES } from './list-body.ts';
export { ListDecoder, type ListEnvelope } from './list-decoder.ts';
export { withoutManagedFields } from './managed-fields.ts';
export { METADATA_LIST_ACCEPT, METADATA_OBJECT_ACCEPT, metadataOnlyObject } from './metadata-only.ts';
export { decodeWatchEvent, INITIAL_EVENTS_END, type TypeMeta, withTypeMeta } from './watch-event.ts';
