import { type Backend, isNotFound } from '../backend/index.ts';
import { OptionsError } from '../errors.ts';
import { type Lease, leaseType } from '../leader-election/index.ts';
import { type Logger, noopLogger } from '../log/index.ts';
import { nonEmptyString } from '../options.ts';
import { ShardRecordInvalidError } from './errors.ts';
import type { Membership } from './membership.ts';
import { checkMemberRecord, type MemberRecord, type VersionedMemberRecord } from './record.ts';

/** The label that puts a Lease in a shard group: `converge.dev/shard-group=<group>`. */
export const SHARD_GROUP_LABEL = 'converge.dev/shard-group';
const EPOCH = 'converge.dev/shard-epoch';
const CLAIM = 'converge.dev/shard-claim';
const REVOKED = 'converge.dev/shard-revoked';
const DURATION = 'converge.dev/shard-lease-duration-ms';

/**
 * The RBAC verbs a {@link LeaseMembership} uses on `coordination.k8s.io` Leases, sorted: it lists
 * the group (by label), creates and updates its own Lease, and deletes (purges) expired members'.
 * `converge manifests --shard-group` grants exactly these.
 */
export const LEASE_MEMBERSHIP_VERBS: readonly string[] = ['create', 'delete', 'list', 'update'];

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

export interface LeaseMembershipOptions {
  /** Any backend serving `coordination.k8s.io/v1` Leases. */
  readonly backend: Backend;
  readonly namespace: string;
  /** The shard group: a DNS label (lower-case letters, digits, `-`; at most 63). */
  readonly group: string;
  /** Field manager recorded on writes. Default `converge-sharding`. */
  readonly fieldManager?: string;
  /** Where records that do not parse are reported. */
  readonly logger?: Logger;
}

/** The Lease name of a member: `<group>.<identity>` (the group has no dots, so it is unambiguous). */
export function memberLeaseName(group: string, identity: string): string {
  return `${group}.${identity}`;
}

/**
 * A {@link Membership} on `coordination.k8s.io/v1` Leases over any Backend: one Lease per member,
 * named `<group>.<identity>` and labelled {@link SHARD_GROUP_LABEL}, so `kubectl get leases -l
 * converge.dev/shard-group=<group>` lists the group. `spec.holderIdentity`,
 * `spec.leaseDurationSeconds` (rounded up) and `spec.renewTime` are what Kubernetes tools show;
 * the epoch, the claim, the revocations and the exact lease duration are annotations
 * (`converge.dev/shard-*`). The Lease's resourceVersion is the record's version.
 *
 * @example
 * const membership = new LeaseMembership({ backend, namespace: 'operators', group: 'widgets' });
 * const member = new ShardMember({ membership, identity: process.env.POD_NAME ?? hostname() });
 */
export class LeaseMembership implements Membership {
  readonly group: string;
  readonly #backend: Backend;
  readonly #namespace: string;
  readonly #fieldManager: string;
  readonly #logger: Logger;
  readonly #last = new Map<string, Lease>();

  constructor(options: LeaseMembershipOptions) {
    if (typeof options !== 'object' || options === null)
      throw new OptionsError('options', options, 'an object');
    const backend = options.backend as Partial<Backend> | undefined;
    if (typeof backend !== 'object' || backend === null || typeof backend.list !== 'function') {
      throw new OptionsError('backend', backend, 'a Backend');
    }
    if (typeof options.group !== 'string' || options.group.length > 63 || !DNS_LABEL.test(options.group)) {
      throw new OptionsError('group', options.group, 'a DNS label (a-z, 0-9, -; at most 63)');
    }
    this.#backend = backend as Backend;
    this.group = options.group;
    if (typeof options.namespace !== 'string' || options.namespace === '') {
      throw new OptionsError('namespace', options.namespace, 'a non-empty string');
    }
    this.#namespace = options.namespace;
    this.#fieldManager = nonEmptyString('fieldManager', options.fieldManager, 'converge-sharding');
    this.#logger = options.logger ?? noopLogger;
  }

  describe(): string {
    return `leases:${this.#namespace}/${SHARD_GROUP_LABEL}=${this.group}`;
  }

  async list(signal: AbortSignal): Promise<readonly VersionedMemberRecord[]> {
    const list = await this.#backend.list<Lease>(leaseType, {
      namespace: this.#namespace,
      labelSelector: `${SHARD_GROUP_LABEL}=${this.group}`,
      signal,
    });
    const out: VersionedMemberRecord[] = [];
    for (const lease of list.items) {
      try {
        const record = leaseToMember(lease, `${this.#namespace}/${lease.metadata.name}`);
        if (lease.metadata.name !== memberLeaseName(this.group, record.identity)) continue;
        this.#last.set(record.identity, lease);
        out.push({ record, version: lease.metadata.resourceVersion ?? '' });
      } catch (error) {
        if (!(error instanceof ShardRecordInvalidError)) throw error;
        this.#logger.warn({ err: error, lease: lease.metadata.name }, 'Skipped an invalid membership record');
      }
    }
    return out;
  }

  async create(record: MemberRecord, signal: AbortSignal): Promise<string> {
    const created = await this.#backend.create<Lease>(leaseType, this.#lease(record, undefined), {
      signal,
      fieldManager: this.#fieldManager,
    });
    this.#last.set(record.identity, created);
    return created.metadata.resourceVersion ?? '';
  }

  async update(record: MemberRecord, version: string, signal: AbortSignal): Promise<string> {
    const updated = await this.#backend.update<Lease>(leaseType, this.#lease(record, version), {
      signal,
      fieldManager: this.#fieldManager,
    });
    this.#last.set(record.identity, updated);
    return updated.metadata.resourceVersion ?? '';
  }

  async delete(identity: string, version: string, signal: AbortSignal): Promise<void> {
    try {
      await this.#backend.delete(
        leaseType,
        { namespace: this.#namespace, name: memberLeaseName(this.group, identity) },
        { preconditions: { resourceVersion: version }, signal },
      );
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    this.#last.delete(identity);
  }

  /** The Lease for `record`, keeping labels, annotations and spec fields of the one last seen. */
  #lease(record: MemberRecord, version: string | undefined): Lease {
    const name = memberLeaseName(this.group, record.identity);
    if (name.length > 253 || !DNS_SUBDOMAIN.test(record.identity)) {
      throw new OptionsError('identity', record.identity, 'a DNS subdomain name (a Lease name part)');
    }
    const base = version === undefined ? undefined : this.#last.get(record.identity);
    const kept = base?.metadata.resourceVersion === version ? base : undefined;
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        ...(kept?.metadata ?? {}),
        name,
        namespace: this.#namespace,
        ...(version === undefined ? {} : { resourceVersion: version }),
        labels: { ...kept?.metadata.labels, [SHARD_GROUP_LABEL]: this.group },
        annotations: {
          ...kept?.metadata.annotations,
          [EPOCH]: String(record.epoch),
          [CLAIM]: record.claim.join(','),
          [REVOKED]: JSON.stringify(record.revoked),
          [DURATION]: String(record.leaseDurationMs),
        },
      },
      spec: {
        ...kept?.spec,
        holderIdentity: record.identity,
        leaseDurationSeconds: Math.ceil(record.leaseDurationMs / 1000),
        ...(record.renewTime === '' ? {} : { renewTime: record.renewTime }),
      },
    };
  }
}

function leaseToMember(lease: Lease, where: string): MemberRecord {
  const annotations = lease.metadata.annotations ?? {};
  const number = (text: string | undefined): number =>
    text === undefined || text === '' ? Number.NaN : Number(text);
  let revoked: unknown;
  try {
    revoked = JSON.parse(annotations[REVOKED] ?? '{}');
  } catch (error) {
    throw new ShardRecordInvalidError(where, `annotation ${REVOKED} is not JSON`, { cause: error });
  }
  const seconds = lease.spec?.leaseDurationSeconds;
  const claim = annotations[CLAIM] ?? '';
  return checkMemberRecord(
    {
      identity: lease.spec?.holderIdentity,
      epoch: number(annotations[EPOCH]),
      claim: claim === '' ? [] : claim.split(','),
      revoked,
      leaseDurationMs:
        annotations[DURATION] !== undefined ? number(annotations[DURATION]) : (seconds ?? 0) * 1000,
      renewTime: lease.spec?.renewTime ?? '',
    },
    where,
  );
}
