import { AlreadyExistsError, ConflictError, NotFoundError, UnavailableError } from '../backend/index.ts';
import { AbortedError, OptionsError } from '../errors.ts';
import { integer, nonEmptyString } from '../options.ts';
import type { LeaderLock } from './lock.ts';
import { requiredString } from './options.ts';
import type { LeaderRecord, VersionedRecord } from './record.ts';

/** A call a locker makes. */
export type LockOperation = 'get' | 'create' | 'update';

/**
 * A fault a {@link MemoryLock} injects into a call:
 * - `error`: the call rejects (default an `UnavailableError`) and changes nothing;
 * - `hang`: the call never answers, until its signal aborts; it changes nothing;
 * - `lostResponse`: the call takes effect, then never answers until its signal aborts (a write
 *   the server applied whose response was lost);
 * - `conflict`: another writer rewrites the record (new version, same content) just before the
 *   call, so a write naming the version read before fails with a ConflictError.
 */
export type LockFault =
  | { readonly type: 'error'; readonly error?: Error }
  | { readonly type: 'hang' }
  | { readonly type: 'lostResponse' }
  | { readonly type: 'conflict' };

/** Which calls a fault hits. */
export interface InjectOptions {
  /** How many matching calls it hits. Default 1. */
  readonly count?: number;
  /** Only calls of this locker. Default: any locker. */
  readonly identity?: string;
  /** Only these operations. Default: all. */
  readonly operations?: readonly LockOperation[];
}

export interface MemoryLockOptions {
  /** Name for `describe()`. Default `memory`. */
  readonly name?: string;
}

interface Rule {
  readonly fault: LockFault;
  readonly identity: string | undefined;
  readonly operations: readonly LockOperation[] | undefined;
  remaining: number;
}

const OPERATIONS: readonly LockOperation[] = ['get', 'create', 'update'];

/**
 * One leader record in memory, shared by many lockers, with the same optimistic concurrency as a
 * Lease (a stale version conflicts) and fault hooks for tests. Each replica takes its own
 * {@link MemoryLock.locker}.
 *
 * @example
 * const shared = new MemoryLock();
 * const a = new LeaderElector({ lock: shared.locker('a'), clock });
 * const b = new LeaderElector({ lock: shared.locker('b'), clock });
 * shared.inject({ type: 'error' }, { identity: 'a', operations: ['update'], count: 3 });
 */
export class MemoryLock {
  readonly name: string;
  #current: VersionedRecord | undefined;
  #version = 0;
  #rules: Rule[] = [];
  #calls = 0;

  constructor(options: MemoryLockOptions = {}) {
    this.name = nonEmptyString('name', options.name, 'memory');
  }

  /** The stored record and its version (undefined before the first create). */
  get current(): VersionedRecord | undefined {
    return this.#current;
  }

  /** How many calls the lockers made. */
  get calls(): number {
    return this.#calls;
  }

  /** A lock that reads and writes the shared record as `identity`. */
  locker(identity: string): LeaderLock {
    const id = requiredString('identity', identity);
    return {
      identity: id,
      describe: () => this.name,
      get: (signal) => this.#call(id, 'get', signal, () => this.#current),
      create: (record, signal) => this.#call(id, 'create', signal, () => this.#create(record)),
      update: (record, version, signal) =>
        this.#call(id, 'update', signal, () => this.#update(record, version)),
    };
  }

  /** Makes the next matching calls fail, hang, lose their response or conflict. */
  inject(fault: LockFault, options: InjectOptions = {}): void {
    const count = integer('count', options.count, 1, 1);
    for (const op of options.operations ?? []) {
      if (!OPERATIONS.includes(op)) throw new OptionsError('operations', op, "'get', 'create' or 'update'");
    }
    this.#rules.push({ fault, identity: options.identity, operations: options.operations, remaining: count });
  }

  /** Removes every fault not yet used. */
  clearFaults(): void {
    this.#rules = [];
  }

  /** Writes `record` as an outside writer would (no version check). Returns the new version. */
  set(record: LeaderRecord): string {
    return this.#store(record);
  }

  /**
   * Deletes the record as `kubectl delete lease` does: the next write creates it again, with its
   * history (`leaderTransitions`) restarted by whoever creates it.
   */
  remove(): void {
    this.#current = undefined;
  }

  #store(record: LeaderRecord): string {
    const version = String(++this.#version);
    this.#current = Object.freeze({ record: Object.freeze({ ...record }), version });
    return version;
  }

  #create(record: LeaderRecord): string {
    if (this.#current !== undefined)
      throw new AlreadyExistsError(`leader record ${this.name} already exists`);
    return this.#store(record);
  }

  #update(record: LeaderRecord, version: string): string {
    const current = this.#current;
    if (current === undefined) throw new NotFoundError(`leader record ${this.name} not found`);
    if (current.version !== version) {
      throw new ConflictError(
        `leader record ${this.name} changed: version ${version} is stale, the latest is ${current.version}`,
      );
    }
    return this.#store(record);
  }

  #take(identity: string, op: LockOperation): LockFault | undefined {
    const i = this.#rules.findIndex(
      (r) =>
        (r.identity === undefined || r.identity === identity) &&
        (r.operations === undefined || r.operations.includes(op)),
    );
    const rule = this.#rules[i];
    if (rule === undefined) return undefined;
    if (--rule.remaining === 0) this.#rules.splice(i, 1);
    return rule.fault;
  }

  async #call<T>(identity: string, op: LockOperation, signal: AbortSignal, apply: () => T): Promise<T> {
    this.#calls++;
    await Promise.resolve();
    if (signal.aborted) throw new AbortedError(`${op} aborted`, { cause: signal.reason });
    const fault = this.#take(identity, op);
    switch (fault?.type) {
      case undefined:
        return apply();
      case 'error':
        throw fault.error ?? new UnavailableError(`injected fault: ${op} failed`);
      case 'hang':
        return hang(op, signal);
      case 'lostResponse':
        apply();
        return hang(op, signal);
      case 'conflict':
        if (this.#current !== undefined) this.#store(this.#current.record);
        return apply();
    }
  }
}

/** Never settles until `signal` aborts. */
function hang(op: string, signal: AbortSignal): Promise<never> {
  return new Promise<never>((_, reject) => {
    const onAbort = (): void => reject(new AbortedError(`${op} aborted`, { cause: signal.reason }));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}
