import { ConvergeError, type ConvergeErrorOptions } from '../errors.ts';

/** Stable codes of the cache's errors. Never reused. */
export const CacheErrorCodes = {
  /** The cache's writer was closed: writes are refused, and a wait for sync that cannot end rejects. */
  CLOSED: 'CONVERGE_ERR_CACHE_CLOSED',
  /** An index with this name is already registered (the namespace index is built in). */
  INDEX_EXISTS: 'CONVERGE_ERR_CACHE_INDEX_EXISTS',
  /** A read asked for an index that was never registered. */
  INDEX_NOT_FOUND: 'CONVERGE_ERR_CACHE_INDEX_NOT_FOUND',
  /** An index function threw or returned something other than an array of strings. */
  INDEX_FUNCTION_FAILED: 'CONVERGE_ERR_CACHE_INDEX_FUNCTION_FAILED',
  /** A write carried an object without `metadata.name`. */
  INVALID_OBJECT: 'CONVERGE_ERR_CACHE_INVALID_OBJECT',
  /** A staged replace was used after it was committed or discarded. */
  STAGE_FINISHED: 'CONVERGE_ERR_CACHE_STAGE_FINISHED',
  /** A cached read of a kind the server does not serve (its list is 404: no CRD installed). */
  KIND_NOT_SERVED: 'CONVERGE_ERR_CACHE_KIND_NOT_SERVED',
} as const;

/**
 * The cache's writer was closed. Writes after `close()` throw it; `waitForSync` rejects with it when
 * the writer closed before the cache synced (the informer stopped before its first list).
 *
 * @example
 * try { await cache.waitForSync(signal); } catch (error) { if (error instanceof CacheClosedError) return; throw error; }
 */
export class CacheClosedError extends ConvergeError {
  constructor(cache: string, what: string) {
    super(CacheErrorCodes.CLOSED, `cache ${cache}: ${what}: the writer was closed`);
  }
}

/**
 * `indexField` was called with a name that is taken. Index names are unique per cache, and
 * `namespace` is reserved for the built-in namespace index.
 *
 * @example
 * writer.indexField('spec.nodeName', (pod) => [pod.spec.nodeName]); // a second call with the same name throws
 */
export class IndexExistsError extends ConvergeError {
  readonly index: string;
  constructor(cache: string, index: string) {
    super(
      CacheErrorCodes.INDEX_EXISTS,
      `cache ${cache}: an index named ${JSON.stringify(index)} already exists`,
    );
    this.index = index;
  }
}

/**
 * A read named an index that was never registered with `indexField`.
 *
 * @example
 * reader.byIndex('owner', uid); // throws IndexNotFoundError unless writer.indexField('owner', …) ran first
 */
export class IndexNotFoundError extends ConvergeError {
  readonly index: string;
  constructor(cache: string, index: string) {
    super(
      CacheErrorCodes.INDEX_NOT_FOUND,
      `cache ${cache}: no index named ${JSON.stringify(index)}; register it with indexField first`,
    );
    this.index = index;
  }
}

/**
 * An index function threw or returned something other than an array of strings. The write still
 * happens; the object is indexed under no value of that index, and this error is logged.
 *
 * @example
 * writer.indexField('owner', (o) => o.metadata.ownerReferences?.map((r) => r.uid) ?? []); // never throws
 */
export class IndexFunctionError extends ConvergeError {
  readonly index: string;
  constructor(cache: string, index: string, reason: string, options?: ConvergeErrorOptions) {
    super(
      CacheErrorCodes.INDEX_FUNCTION_FAILED,
      `cache ${cache}: index function ${JSON.stringify(index)} ${reason}`,
      options,
    );
    this.index = index;
  }
}

/**
 * A write carried an object the cache cannot key: not an object, or without a non-empty
 * `metadata.name`. The informer never writes such objects (it logs and skips them).
 *
 * @example
 * writer.apply({ type: 'ADDED', object: { metadata: {} } }); // throws InvalidObjectError
 */
export class InvalidObjectError extends ConvergeError {
  constructor(cache: string, reason: string) {
    super(CacheErrorCodes.INVALID_OBJECT, `cache ${cache}: cannot store the object: ${reason}`);
  }
}

/**
 * A staged replace was added to, committed or discarded after it was already committed or
 * discarded. A stage is used once.
 *
 * @example
 * const stage = writer.stage(); stage.commit('7'); stage.add(object); // throws StageFinishedError
 */
export class StageFinishedError extends ConvergeError {
  constructor(cache: string) {
    super(
      CacheErrorCodes.STAGE_FINISHED,
      `cache ${cache}: the staged replace was already committed or discarded`,
    );
  }
}

/**
 * A cached read (`manager.client.get` / `list`) of a kind the server does not serve: the informer
 * that fills the cache got 404 for its list, which for a collection means the resource does not
 * exist (a custom resource whose CustomResourceDefinition is not installed, or a group or version
 * the server lacks). Not a `NotFoundError`, so `ignoreNotFound` does not take it for a missing
 * object (controller-runtime's `NoKindMatchError`). The informer keeps retrying: once the CRD is
 * applied, the next read waits for it to sync as usual.
 *
 * @example
 * try { await manager.client.get(backupType, key); } catch (error) { if (error instanceof KindNotServedError) log.warn(error.message); }
 */
export class KindNotServedError extends ConvergeError {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  constructor(
    type: {
      readonly group: string;
      readonly version: string;
      readonly kind: string;
      readonly plural: string;
    },
    options?: ConvergeErrorOptions,
  ) {
    const apiVersion = type.group === '' ? type.version : `${type.group}/${type.version}`;
    const resource = type.group === '' ? type.plural : `${type.plural}.${type.group}`;
    super(
      CacheErrorCodes.KIND_NOT_SERVED,
      `cannot read ${type.kind} (${apiVersion}) through the cache: the server does not serve ${resource} ` +
        `in ${apiVersion} (its list answered 404); install its CustomResourceDefinition, or check the group and version`,
      options,
    );
    this.group = type.group;
    this.version = type.version;
    this.kind = type.kind;
    this.plural = type.plural;
  }
}
