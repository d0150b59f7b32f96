import { deepFreeze } from '../cache/index.ts';
import type { ObjectMeta } from '../object/index.ts';

/** Entries per generation of a {@link Generations} table (so at most twice this many are held). */
const GENERATION_SIZE = 4096;

type Writable<T> = { -readonly [K in keyof T]: T[K] };

/** A shared, deep-frozen record, with its own keys and values in order (to compare without lookups). */
interface RecordSample {
  readonly value: object;
  readonly keys: readonly string[];
  readonly values: readonly unknown[];
}

/** A shared, deep-frozen array: each item is a string, or a record. */
interface ListSample {
  readonly value: readonly unknown[];
  readonly items: readonly (string | RecordSample)[];
}

/** The values the last object of a family had, shared. */
interface Family {
  namespace: string | undefined;
  generateName: string | undefined;
  labels: RecordSample | undefined;
  annotations: RecordSample | undefined;
  ownerReferences: ListSample | undefined;
  finalizers: ListSample | undefined;
}

/**
 * A table that forgets: the entries of the current generation and of the one before it. When the
 * current one is full it becomes the old one and the old one is dropped, so what is still looked
 * up survives (an old entry that is hit moves to the current generation) and the table never
 * holds more than twice {@link GENERATION_SIZE} entries, whatever it is fed.
 */
class Generations<V> {
  #young = new Map<string, V>();
  #old = new Map<string, V>();

  get(key: string): V | undefined {
    const young = this.#young.get(key);
    if (young !== undefined) return young;
    const old = this.#old.get(key);
    if (old !== undefined) this.set(key, old);
    return old;
  }

  set(key: string, value: V): void {
    if (this.#young.size >= GENERATION_SIZE) {
      this.#old = this.#young;
      this.#young = new Map();
    }
    this.#young.set(key, value);
  }
}

/**
 * Shares what the objects of one informer repeat before they are frozen into its cache (issue 29:
 * a metadata-only cache of 100 000 Pods held 768 B per Pod, a third of it owner references and
 * timestamps every sibling had a copy of).
 *
 * Objects are grouped in families: those with the same first owner (its uid), else those of the
 * same namespace. Each family remembers the last member's namespace, generateName, labels,
 * annotations, owner references and finalizers, frozen; a member whose value equals the
 * remembered one gets the remembered one instead, any other value becomes the remembered one.
 * The Pods of a ReplicaSet thus hold one `ownerReferences` array, one `labels` and one
 * `annotations` object between them, for one table lookup per Pod. Timestamps go through a string
 * table (Pods created in the same second share one `creationTimestamp`).
 *
 * Only unfrozen metadata is changed, in place, and only by replacing a value with an equal one:
 * the same characters, or a plain record or array with the same entries in the same order
 * (compared with `===`). Frozen metadata (a store's shared objects) is left as
 * it is. What becomes shared is deep-frozen at once, so the cache's freeze skips it. Memory is
 * bounded: each table forgets what it has not seen for a while.
 *
 * @example
 * const interner = new MetadataInterner();
 * interner.intern(a.metadata);
 * interner.intern(b.metadata); // a sibling of a: b.metadata.ownerReferences === a.metadata.ownerReferences
 */
export class MetadataInterner {
  readonly #byOwner = new Generations<Family>();
  readonly #byNamespace = new Generations<Family>();
  readonly #timestamps = new Generations<string>();

  /** Shares the repeated values of `metadata` with those seen before (in place; frozen metadata is skipped). */
  intern(metadata: ObjectMeta): void {
    if (Object.isFrozen(metadata)) return;
    const meta = metadata as Writable<ObjectMeta>;
    const family = this.#family(meta);
    const { namespace, generateName, labels, annotations, ownerReferences, finalizers } = meta;
    if (typeof namespace === 'string') {
      const known = family.namespace;
      if (known === namespace) meta.namespace = known;
      else family.namespace = namespace;
    }
    if (typeof generateName === 'string') {
      const known = family.generateName;
      if (known === generateName) meta.generateName = known;
      else family.generateName = generateName;
    }
    if (labels !== undefined) {
      const known = family.labels;
      if (known !== undefined && sameRecord(known, labels)) meta.labels = known.value as typeof labels;
      else family.labels = recordSample(labels) ?? known;
    }
    if (annotations !== undefined) {
      const known = family.annotations;
      if (known !== undefined && sameRecord(known, annotations))
        meta.annotations = known.value as typeof annotations;
      else family.annotations = recordSample(annotations) ?? known;
    }
    if (ownerReferences !== undefined) {
      const known = family.ownerReferences;
      if (known !== undefined && sameList(known, ownerReferences))
        meta.ownerReferences = known.value as typeof ownerReferences;
      else family.ownerReferences = listSample(ownerReferences) ?? known;
    }
    if (finalizers !== undefined) {
      const known = family.finalizers;
      if (known !== undefined && sameList(known, finalizers))
        meta.finalizers = known.value as typeof finalizers;
      else family.finalizers = listSample(finalizers) ?? known;
    }
    const { creationTimestamp, deletionTimestamp } = meta;
    if (typeof creationTimestamp === 'string') meta.creationTimestamp = this.#timestamp(creationTimestamp);
    if (typeof deletionTimestamp === 'string') meta.deletionTimestamp = this.#timestamp(deletionTimestamp);
  }

  #family(meta: ObjectMeta): Family {
    const refs = meta.ownerReferences as readonly unknown[] | undefined;
    const owner = Array.isArray(refs) ? (refs[0] as { uid?: unknown } | undefined)?.uid : undefined;
    const byOwner = typeof owner === 'string';
    const table = byOwner ? this.#byOwner : this.#byNamespace;
    const key = byOwner ? owner : typeof meta.namespace === 'string' ? meta.namespace : '';
    let family = table.get(key);
    if (family === undefined) {
      // Every field from the start: one hidden class for every family.
      family = {
        namespace: undefined,
        generateName: undefined,
        labels: undefined,
        annotations: undefined,
        ownerReferences: undefined,
        finalizers: undefined,
      };
      table.set(key, family);
    }
    return family;
  }

  #timestamp(value: string): string {
    const known = this.#timestamps.get(value);
    if (known !== undefined) return known;
    this.#timestamps.set(value, value);
    return value;
  }
}

function isPlainRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.getPrototypeOf(value) === Object.prototype
  );
}

/** `record` deep-frozen, as a sample; undefined for anything but a plain object. */
function recordSample(record: unknown): RecordSample | undefined {
  if (!isPlainRecord(record)) return undefined;
  const keys: string[] = [];
  const values: unknown[] = [];
  for (const key in record) {
    keys.push(key);
    values.push(record[key]);
  }
  return { value: deepFreeze(record), keys, values };
}

/** `list` deep-frozen, as a sample; undefined unless each item is a string or a plain object. */
function listSample(list: unknown): ListSample | undefined {
  if (!Array.isArray(list)) return undefined;
  const items: (string | RecordSample)[] = [];
  for (const item of list) {
    const sample = typeof item === 'string' ? item : recordSample(item);
    if (sample === undefined) return undefined;
    items.push(sample);
  }
  return { value: deepFreeze(list), items };
}

/** Whether `value` is a plain object with the sample's keys, in order, and `===` values. */
function sameRecord(sample: RecordSample, value: unknown): boolean {
  if (!isPlainRecord(value)) return false;
  const { keys, values } = sample;
  let i = 0;
  for (const key in value) {
    if (keys[i] !== key || value[key] !== values[i]) return false;
    i++;
  }
  return i === keys.length;
}

/** Whether `value` is an array whose items are the sample's strings or {@link sameRecord} its records. */
function sameList(sample: ListSample, value: unknown): boolean {
  const { items } = sample;
  if (!Array.isArray(value) || value.length !== items.length) return false;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (typeof item === 'string' ? item !== value[i] : !sameRecord(item as RecordSample, value[i]))
      return false;
  }
  return true;
}
