/**
 * `/debug/keys?key=NAMESPACE/NAME`: the keys of one object only, so that `converge why` (or curl)
 * finds one object among 100 000 queued keys without receiving them: `/debug/keys` alone lists at
 * most 10 000 keys per controller, in queue order, and has no paging.
 */
import type { InstrumentableController } from '../controller-metrics.ts';
import { BadQuery, type DebugKeys, debugKeys, type KeyOwnership } from './debug-keys.ts';

/** `key` values one request may give. */
const MAX_KEYS = 16;
/** Characters no key holds. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
const CONTROL = /[\u0000-\u001f\u007f]/;
/** A namespace (63) and a name (253) with the slash between them. */
const MAX_KEY_LENGTH = 317;

/**
 * The `/debug/keys` document, narrowed to the keys of the objects `?key=` names (repeatable:
 * any of them) when given; every other parameter works as in {@link debugKeys}, and every
 * controller is listed (with no keys when it holds none of them). A key is the object's key as
 * `keyToString` writes it (`namespace/name`, or `name` for a cluster-scoped object); it matches a
 * controller's key of that text, and a dynamic controller's `group/version/resource/namespace/name`
 * of any kind (the reader tells the kinds apart by the resource). Walks each controller's queue
 * once, as `/debug/keys` does. Throws {@link BadQuery} (400) for an empty, overlong or control
 * character key, or more than 16.
 *
 * @example
 * debugKeysOf(metrics.controllers(), new URLSearchParams('key=default/web'), Date.now());
 */
export function debugKeysOf(
  controllers: readonly InstrumentableController[],
  query: URLSearchParams,
  now: number,
  ownership: KeyOwnership = {},
): DebugKeys {
  const wanted = query.getAll('key');
  if (wanted.length === 0) return debugKeys(controllers, query, now, ownership);
  if (wanted.length > MAX_KEYS) throw new BadQuery(400, `at most ${MAX_KEYS} key parameters`);
  for (const key of wanted) {
    if (key === '' || key.length > MAX_KEY_LENGTH || CONTROL.test(key))
      throw new BadQuery(
        400,
        `key must be namespace/name or name (at most ${MAX_KEY_LENGTH} characters, no control characters)`,
      );
  }
  const matches = matcher(wanted);
  const rest = new URLSearchParams(query);
  rest.delete('key');
  return debugKeys(
    controllers.map((c) => narrowed(c, matches)),
    rest,
    now,
    ownership,
  );
}

/**
 * A view of a controller whose `inspect` lists only the keys `matches` accepts; every other member
 * (`name`, `hotLoopKeys`, those added later) is the controller's own, called on it.
 */
function narrowed(c: InstrumentableController, matches: (id: string) => boolean): InstrumentableController {
  const inspect = (limit?: number): ReturnType<InstrumentableController['inspect']> => {
    const keys = c.inspect().filter((k) => matches(k.id));
    return limit === undefined ? keys : keys.slice(0, limit);
  };
  return new Proxy(c, {
    get(target, property) {
      if (property === 'inspect') return inspect;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

function matcher(wanted: readonly string[]): (id: string) => boolean {
  const exact = new Set(wanted);
  // A dynamic controller's key: `group/version/resource/` before `namespace/name` (`/name` when
  // cluster-scoped); the core group is empty, so the prefix always holds exactly two slashes.
  const tails = wanted.map((key) => `/${key.includes('/') ? key : `/${key}`}`);
  return (id) => {
    if (exact.has(id)) return true;
    for (const tail of tails) {
      if (id.length > tail.length && id.endsWith(tail) && slashes(id, id.length - tail.length) === 2)
        return true;
    }
    return false;
  };
}

function slashes(text: string, end: number): number {
  let count = 0;
  for (let i = 0; i < end; i++) if (text.charCodeAt(i) === 47) count++;
  return count;
}
