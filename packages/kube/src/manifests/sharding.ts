import { LEASE_MEMBERSHIP_VERBS } from '@converge/runtime';
import type { Manifest } from './generate.ts';
import type { ResolvedManifestOptions } from './options.ts';
import { LEASE_VERBS } from './rbac.ts';

/**
 * The verbs on Leases the operator's namespace grants: leader election's, and with a shard group
 * also what Lease membership uses (`LEASE_MEMBERSHIP_VERBS`: it lists the group, creates and
 * updates its own Lease, deletes expired members'). Sorted; empty with neither.
 */
export function leaseVerbs(o: ResolvedManifestOptions): string[] {
  return [
    ...new Set([
      ...(o.leaderElection ? LEASE_VERBS : []),
      ...(o.shardGroup === undefined ? [] : LEASE_MEMBERSHIP_VERBS),
    ]),
  ].sort();
}

/**
 * With a shard group and without leader election: a Role granting the Lease membership's verbs in
 * the operator's namespace (where `--lease-namespace $(POD_NAMESPACE)` puts the member Leases) and
 * its binding. Empty otherwise: with leader election its Role holds the verbs ({@link leaseVerbs}).
 */
export function shardGroupRbac(
  o: ResolvedManifestOptions,
  meta: (name: string, namespace?: string) => Manifest['metadata'],
  subject: Readonly<Record<string, string>>,
): Manifest[] {
  if (o.shardGroup === undefined || o.leaderElection) return [];
  const role = `${o.name}-shard-group-role`;
  return [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: meta(role, o.namespace),
      rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: leaseVerbs(o) }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: meta(`${o.name}-shard-group-rolebinding`, o.namespace),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role },
      subjects: [subject],
    },
  ];
}

/**
 * What the Deployment's file says of a sharded operator after the header: why there is no leader
 * fencing policy. Empty without a shard group.
 */
export function shardedNote(o: ResolvedManifestOptions): string {
  if (o.shardGroup === undefined) return '';
  return (
    `# Sharded: the replicas are members of shard group ${o.shardGroup} (Leases ${o.shardGroup}.<pod> in\n` +
    '# this namespace) and share the keys. No leader fencing policy: every member writes, and it\n' +
    "# would refuse all but the leader's writes. Members' writes carry their shard's fence, which\n" +
    "# Converge's API server enforces and a Kubernetes cluster ignores (docs/guide/sharding.md).\n"
  );
}
