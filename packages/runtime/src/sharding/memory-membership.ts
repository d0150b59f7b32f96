import { AlreadyExistsError, ConflictError, NotFoundError, UnavailableError } from '../backend/index.ts';
import { AbortedError } from '../errors.ts';
import { integer, nonEmptyString } from '../options.ts';
import type { Membership } from './membership.ts';
import { checkMemberRecord, type MemberRecord, type VersionedMemberRecord } from './record.ts';

/** A call a member makes on its membership. */
export type MembershipOperation = 'list' | 'create' | 'update' | 'delete';

/**
 * A fault a {@link MemoryMembership} injects into a call:
 * - `error`: the call rejects (default an `UnavailableError`) and changes nothing;
 * - `hang`: the call never answers until its signal aborts, and changes nothing;
 * - `lostResponse`: the call takes effect, then never answers until its signal aborts (a write
 *   the server applied whose answer was lost);
 * - `hide`: a list leaves out the records of `identities` (a member that briefly sees less). Such
 *   a list is not linearizable, which members rely on: a member keeps honouring the last claim it
 *   saw of a record that vanished, but only until that record would have expired — a record hidden
 *   for longer than its lease counts as deleted, and its keys move while its member still runs them.
 */
export type MembershipFault =
  | { readonly type: 'error'; readonly error?: Error }
  | { readonly type: 'hang' }
  | { readonly type: 'lostResponse' }
  | { readonly type: 'hide'; readonly identities: readonly string[] };

/** Which calls a fault hits. */
export interface MembershipInjectOptions {
  /** How many matching calls it hits. Default 1. */
  readonly count?: number;
  /** Only calls made by this member (see {@link MemoryMembership.member}). Default: any. */
  readonly caller?: string;
  readonly operations?: readonly MembershipOperation[];
}

interface Rule {
  readonly fault: MembershipFault;
  readonly caller: string | undefined;
  readonly operations: readonly MembershipOperation[] | undefined;
  remaining: number;
}

/**
 * The records of one shard group in memory, with a Lease's optimistic concurrency and fault hooks
 * for tests. Each member takes its own view with {@link MemoryMembership.member} so faults can
 * target it; `remove` deletes a record as a person with kubectl would.
 *
 * @example
 * const shared = new MemoryMembership({ group: 'shards' });
 * const a = new ShardMember({ membership: shared.member('a'), identity: 'a', clock });
 * shared.inject({ type: 'hide', identities: ['c'] }, { caller: 'a', count: 3 });
 */
export class MemoryMembership implements Membership {
  readonly group: string;
  readonly #records = new Map<string, VersionedMemberRecord>();
  #version = 0;
  #rules: Rule[] = [];

  constructor(options: { readonly group?: string } = {}) {
    this.group = nonEmptyString('group', options.group, 'shards');
  }

  describe(): string {
    return `memory:${this.group}`;
  }

  /** The records, by identity (what a person would see). */
  get records(): ReadonlyMap<string, VersionedMemberRecord> {
    return this.#records;
  }

  /** This membership as seen by `caller`: the same records, with faults aimed at it. */
  member(caller: string): Membership {
    return {
      group: this.group,
      describe: () => this.describe(),
      list: (signal) => this.#list(caller, signal),
      create: (record, signal) => this.#call(caller, 'create', signal, () => this.#create(record)),
      update: (record, version, signal) =>
        this.#call(caller, 'update', signal, () => this.#update(record, version)),
      delete: (identity, version, signal) =>
        this.#call(caller, 'delete', signal, () => this.#delete(identity, version)),
    };
  }

  list(signal: AbortSignal): Promise<readonly VersionedMemberRecord[]> {
    return this.#list(undefined, signal);
  }

  create(record: MemberRecord, signal: AbortSignal): Promise<string> {
    return this.#call(undefined, 'create', signal, () => this.#create(record));
  }

  update(record: MemberRecord, version: string, signal: AbortSignal): Promise<string> {
    return this.#call(undefined, 'update', signal, () => this.#update(record, version));
  }

  delete(identity: string, version: string, signal: AbortSignal): Promise<void> {
    return this.#call(undefined, 'delete', signal, () => this.#delete(identity, version));
  }

  /** Deletes a record without a version check, as `kubectl delete lease` would. */
  remove(identity: string): void {
    this.#records.delete(identity);
  }

  /** Makes the next matching calls fail, hang or (lists) hide records. */
  inject(fault: MembershipFault, options: MembershipInjectOptions = {}): void {
    const count = integer('count', options.count, 1, 1);
    this.#rules.push({ fault, caller: options.caller, operations: options.operations, remaining: count });
  }

  clearFaults(): void {
    this.#rules = [];
  }

  #store(record: MemberRecord): string {
    const version = String(++this.#version);
    const checked = checkMemberRecord(record, `${this.describe()}/${record.identity}`);
    this.#records.set(record.identity, Object.freeze({ record: checked, version }));
    return version;
  }

  #create(record: MemberRecord): string {
    if (this.#records.has(record.identity)) {
      throw new AlreadyExistsError(`member ${record.identity} of ${this.group} already exists`);
    }
    return this.#store(record);
  }

  #update(record: MemberRecord, version: string): string {
    const current = this.#records.get(record.identity);
    if (current === undefined)
      throw new NotFoundError(`member ${record.identity} of ${this.group} not found`);
    if (current.version !== version) {
      throw new ConflictError(`member ${record.identity} of ${this.group} changed since version ${version}`);
    }
    return this.#store(record);
  }

  #delete(identity: string, version: string): void {
    const current = this.#records.get(identity);
    if (current === undefined) return;
    if (current.version !== version) {
      throw new ConflictError(`member ${identity} of ${this.group} changed since version ${version}`);
    }
    this.#records.delete(identity);
  }

  async #list(caller: string | undefined, signal: AbortSignal): Promise<readonly VersionedMemberRecord[]> {
    let hidden: readonly string[] = [];
    const all = await this.#call(
      caller,
      'list',
      signal,
      () => [...this.#records.values()],
      (fault) => {
        hidden = fault.identities;
      },
    );
    return all.filter((r) => !hidden.includes(r.record.identity));
  }

  #take(caller: string | undefined, op: MembershipOperation): MembershipFault | undefined {
    const i = this.#rules.findIndex(
      (r) =>
        (r.caller === undefined || r.caller === caller) &&
        (r.operations === undefined || r.operations.includes(op)) &&
        (r.fault.type !== 'hide' || op === 'list'),
    );
    const rule = this.#rules[i];
    if (rule === undefined) return undefined;
    if (--rule.remaining === 0) this.#rules.splice(i, 1);
    return rule.fault;
  }

  async #call<T>(
    caller: string | undefined,
    op: MembershipOperation,
    signal: AbortSignal,
    apply: () => T,
    onHide?: (fault: { readonly identities: readonly string[] }) => void,
  ): Promise<T> {
    await Promise.resolve();
    if (signal.aborted) throw new AbortedError(`${op} aborted`, { cause: signal.reason });
    const fault = this.#take(caller, op);
    switch (fault?.type) {
      case undefined:
        return apply();
      case 'hide':
        onHide?.(fault);
        return apply();
      case 'error':
        throw fault.error ?? new UnavailableError(`injected fault: ${op} failed`);
      case 'lostResponse':
        apply();
        return await hang(op, signal);
      case 'hang':
        return await hang(op, signal);
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
