import type { ObjectEvent } from '../event/index.ts';

/** Decides whether an event should reach the handler. */
export type Predicate<T> = (event: ObjectEvent<T>) => boolean;
