import { OptionsError } from '../errors.ts';
import type { ObjectEvent } from '../event/index.ts';
import type { Predicate } from './predicate.ts';

type EventOf<T, K extends ObjectEvent<T>['type']> = Extract<ObjectEvent<T>, { readonly type: K }>;

/** One optional test per event type; a missing test passes its events. */
export interface PredicateFuncs<T> {
  readonly create?: (event: EventOf<T, 'create'>) => boolean;
  readonly update?: (event: EventOf<T, 'update'>) => boolean;
  readonly delete?: (event: EventOf<T, 'delete'>) => boolean;
  readonly generic?: (event: EventOf<T, 'generic'>) => boolean;
}

/**
 * A predicate from per-event-type tests (controller-runtime's `predicate.Funcs`). Event types
 * without a test pass.
 *
 * @example
 * // Ignore deletes; the finalizer already handles them.
 * const noDeletes = predicateFuncs<Widget>({ delete: () => false });
 */
export function predicateFuncs<T>(funcs: PredicateFuncs<T>): Predicate<T> {
  if (typeof funcs !== 'object' || funcs === null) {
    throw new OptionsError('funcs', funcs, 'an object of create/update/delete/generic tests');
  }
  for (const field of ['create', 'update', 'delete', 'generic'] as const) {
    const value = funcs[field];
    if (value !== undefined && typeof value !== 'function')
      throw new OptionsError(field, value, 'a function');
  }
  const { create, update, delete: remove, generic } = funcs;
  return (event) => {
    switch (event.type) {
      case 'create':
        return create === undefined || create(event);
      case 'update':
        return update === undefined || update(event);
      case 'delete':
        return remove === undefined || remove(event);
      case 'generic':
        return generic === undefined || generic(event);
    }
  };
}
