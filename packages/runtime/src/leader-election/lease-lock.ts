import { type Backend, isNotFound, type ResourceType, resourceType } from '../backend/index.ts';
import { OptionsError } from '../errors.ts';
import type { KubeObject } from '../object/index.ts';
import { nonEmptyString } from '../options.ts';
import { LeaderRecordInvalidError } from './errors.ts';
import type { LeaderLock } from './lock.ts';
import { requiredString } from './options.ts';
import type { LeaderRecord, VersionedRecord } from './record.ts';

/** The `coordination.k8s.io/v1` Lease kind (namespaced, no generation, no status). */
export const leaseType: ResourceType<Lease> = resourceType<Lease>({
  group: 'coordination.k8s.io',
  version: 'v1',
  kind: 'Lease',
  plural: 'leases',
  namespaced: true,
  generation: false,
});

/** `coordination.k8s.io/v1` LeaseSpec. Fields this lock does not know are kept on update. */
export interface LeaseSpec {
  readonly holderIdentity?: string;
  readonly leaseDurationSeconds?: number;
  /** RFC 3339 with microseconds. */
  readonly acquireTime?: string;
  /** RFC 3339 with microseconds. */
  readonly renewTime?: string;
  readonly leaseTransitions?: number;
  readonly [field: string]: unknown;
}

/** A `coordination.k8s.io/v1` Lease. */
export interface Lease extends KubeObject {
  readonly spec?: LeaseSpec;
}

export interface LeaseLockOptions {
  /** Any backend serving {@link leaseType}: the store, the Kubernetes HTTP backend, … */
  readonly backend: Backend;
  readonly namespace: string;
  readonly name: string;
  /** Who this replica is; unique among the replicas. */
  readonly identity: string;
  /** Labels put on the Lease when this lock creates it. */
  readonly labels?: Readonly<Record<string, string>>;
  /** Field manager recorded on writes. Default `converge-leader-election`. */
  readonly fieldManager?: string;
}

/**
 * A {@link LeaderLock} on a `coordination.k8s.io/v1` Lease, over any Backend: the in-process
 * store, the embedded API server or a real cluster through the Kubernetes backend. The Lease's
 * `resourceVersion` is the record's version, so a stale update is the backend's ConflictError.
 *
 * `leaseDurationSeconds` is whole seconds: a duration that is not is rounded up, so other
 * replicas never wait less than this one expects.
 *
 * @example
 * const lock = new LeaseLock({ backend, namespace: 'kube-system', name: 'my-operator', identity: process.env.POD_NAME ?? hostname() });
 * const elector = new LeaderElector({ lock });
 */
export class LeaseLock implements LeaderLock {
  readonly identity: string;
  readonly #backend: Backend;
  readonly #namespace: string;
  readonly #name: string;
  readonly #labels: Readonly<Record<string, string>> | undefined;
  readonly #fieldManager: string;
  /** The Lease last read or written, so an update keeps its labels and unknown spec fields. */
  #last: Lease | undefined;

  constructor(options: LeaseLockOptions) {
    if (typeof options !== 'object' || options === null)
      throw new OptionsError('options', options, 'an object');
    const backend = options.backend;
    if (typeof backend !== 'object' || backend === null || typeof backend.get !== 'function') {
      throw new OptionsError('backend', backend, 'a Backend');
    }
    this.#backend = backend;
    this.#namespace = requiredString('namespace', options.namespace);
    this.#name = requiredString('name', options.name);
    this.identity = requiredString('identity', options.identity);
    this.#labels = options.labels;
    this.#fieldManager = nonEmptyString('fieldManager', options.fieldManager, 'converge-leader-election');
  }

  describe(): string {
    return `${this.#namespace}/${this.#name}`;
  }

  async get(signal: AbortSignal): Promise<VersionedRecord | undefined> {
    let lease: Lease;
    try {
      lease = await this.#backend.get<Lease>(leaseType, this.#key(), { signal });
    } catch (error) {
      if (isNotFound(error)) {
        this.#last = undefined;
        return undefined;
      }
      throw error;
    }
    this.#last = lease;
    return { record: leaseToRecord(lease, this.describe()), version: this.#version(lease) };
  }

  async create(record: LeaderRecord, signal: AbortSignal): Promise<string> {
    const lease: Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: this.#name,
        namespace: this.#namespace,
        ...(this.#labels === undefined ? {} : { labels: this.#labels }),
      },
      spec: recordToLeaseSpec(record),
    };
    const created = await this.#backend.create(leaseType, lease, {
      signal,
      fieldManager: this.#fieldManager,
    });
    this.#last = created;
    return this.#version(created);
  }

  async update(record: LeaderRecord, version: string, signal: AbortSignal): Promise<string> {
    const base = this.#last?.metadata.resourceVersion === version ? this.#last : undefined;
    const lease: Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        ...(base?.metadata ?? { name: this.#name, namespace: this.#namespace }),
        resourceVersion: version,
      },
      spec: { ...base?.spec, ...recordToLeaseSpec(record) },
    };
    const updated = await this.#backend.update(leaseType, lease, {
      signal,
      fieldManager: this.#fieldManager,
    });
    this.#last = updated;
    return this.#version(updated);
  }

  #key() {
    return { namespace: this.#namespace, name: this.#name };
  }

  #version(lease: Lease): string {
    const rv = lease.metadata.resourceVersion;
    if (typeof rv !== 'string' || rv === '') {
      throw new LeaderRecordInvalidError(this.describe(), 'the Lease has no metadata.resourceVersion');
    }
    return rv;
  }
}

/** Reads a Lease's spec as a leader record; missing fields read as empty (client-go does the same). */
export function leaseToRecord(lease: Lease, describe: string): LeaderRecord {
  const spec: LeaseSpec = lease.spec ?? {};
  const problem = (field: string, expected: string): LeaderRecordInvalidError =>
    new LeaderRecordInvalidError(
      describe,
      `spec.${field} must be ${expected}, got ${JSON.stringify(spec[field])}`,
    );
  const holder = spec.holderIdentity ?? '';
  if (typeof holder !== 'string') throw problem('holderIdentity', 'a string');
  const seconds = spec.leaseDurationSeconds ?? 0;
  if (!Number.isInteger(seconds) || seconds < 0) throw problem('leaseDurationSeconds', 'an integer >= 0');
  const transitions = spec.leaseTransitions ?? 0;
  if (!Number.isInteger(transitions) || transitions < 0) throw problem('leaseTransitions', 'an integer >= 0');
  const acquireTime = spec.acquireTime ?? '';
  if (typeof acquireTime !== 'string') throw problem('acquireTime', 'an RFC 3339 time');
  const renewTime = spec.renewTime ?? '';
  if (typeof renewTime !== 'string') throw problem('renewTime', 'an RFC 3339 time');
  return {
    holderIdentity: holder,
    leaseDurationMs: seconds * 1000,
    acquireTime,
    renewTime,
    leaderTransitions: transitions,
  };
}

/** Writes a leader record as a LeaseSpec (durations rounded up to whole seconds; empty times omitted). */
export function recordToLeaseSpec(record: LeaderRecord): LeaseSpec {
  return {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: Math.ceil(record.leaseDurationMs / 1000),
    ...(record.acquireTime === '' ? {} : { acquireTime: record.acquireTime }),
    ...(record.renewTime === '' ? {} : { renewTime: record.renewTime }),
    leaseTransitions: record.leaderTransitions,
  };
}
