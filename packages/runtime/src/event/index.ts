/**
 * Object events (create, update, delete with tombstones, generic) and the event-source interface
 * informers, pollers and channels implement.
 *
 * @module
 */
export { type EventSource, eventObject, type ObjectEvent, type ObjectEventType } from './event.ts';
