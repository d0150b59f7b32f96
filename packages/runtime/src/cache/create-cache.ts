import { OptionsError } from '../errors.ts';
import { type Logger, noopLogger } from '../log/index.ts';
import type { KubeObject } from '../object/index.ts';
import { CacheCore } from './core.ts';
import type { IndexFunc } from './field-index.ts';
import { type CacheReader, CoreReader } from './reader.ts';
import { type CacheWriter, CoreWriter } from './writer.ts';

/** Options of {@link createCache}. */
export interface CacheOptions<T extends KubeObject = KubeObject> {
  /** A name for logs and errors. Default 'cache'. */
  readonly name?: string;
  /** Where index function failures are logged. Default no logging. */
  readonly logger?: Logger;
  /** Custom indexes to register at once, by name (same as calling `writer.indexField` for each). */
  readonly indexes?: Readonly<Record<string, IndexFunc<T>>>;
}

/** The two halves of a cache: one writer, and a reader to share as widely as you like. */
export interface Cache<T extends KubeObject = KubeObject> {
  readonly reader: CacheReader<T>;
  readonly writer: CacheWriter<T>;
}

/**
 * Creates an in-memory object cache split into one writer and a reader (kube-rs
 * `reflector::store()`): the writer applies watch events and relists, the reader serves `get`,
 * `list` (by namespace, label selector or index), `byIndex` and `keys` from memory, plus
 * `hasSynced` / `waitForSync`. Objects are deep-frozen once on write and shared with every reader,
 * never copied (see {@link CacheReader}). A namespace index is built in; add your own with
 * `indexes` or `writer.indexField`. Deleting an object removes every trace of it, indexes included.
 *
 * @example
 * const { reader, writer } = createCache<Pod>({
 *   name: 'pods',
 *   indexes: { 'spec.nodeName': (pod) => (pod.spec.nodeName ? [pod.spec.nodeName] : []) },
 * });
 * writer.replace(items, '42');
 * writer.markSynced();
 * reader.byIndex('spec.nodeName', 'node-1');
 */
export function createCache<T extends KubeObject = KubeObject>(options: CacheOptions<T> = {}): Cache<T> {
  if (typeof options !== 'object' || options === null)
    throw new OptionsError('options', options, 'an object');
  const { name = 'cache', logger = noopLogger, indexes = {} } = options;
  if (typeof name !== 'string' || name === '') throw new OptionsError('name', name, 'a non-empty string');
  if (typeof logger !== 'object' || logger === null || typeof logger.error !== 'function') {
    throw new OptionsError('logger', logger, 'a logger');
  }
  if (typeof indexes !== 'object' || indexes === null) {
    throw new OptionsError('indexes', indexes, 'an object of index name to index function');
  }
  const core = new CacheCore<T>(name, logger);
  const writer = new CoreWriter(core);
  for (const [index, fn] of Object.entries(indexes)) {
    if (typeof fn !== 'function') throw new OptionsError(`indexes.${index}`, fn, 'an index function');
    writer.indexField(index, fn);
  }
  return { reader: new CoreReader(core), writer };
}
