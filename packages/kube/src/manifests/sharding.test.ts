import {
  type Backend,
  deploymentType,
  LEASE_MEMBERSHIP_VERBS,
  LeaseMembership,
  leaseType,
  OptionsError,
  Permissions,
} from '@converge/runtime';
import { VirtualClock } from '@converge/runtime/testing';
import { Store } from '@converge/store';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  configFiles,
  FENCES_RULE,
  generateManifests,
  helmChart,
  LEASE_VERBS,
  type Manifest,
  type ManifestOptions,
  runArgs,
} from './index.ts';

/** The RBAC verb of each Backend method (kube's: an update of status is an update of the subresource). */
const VERB_OF: Readonly<Record<string, string>> = {
  get: 'get',
  list: 'list',
  watch: 'watch',
  create: 'create',
  update: 'update',
  updateStatus: 'update',
  patch: 'patch',
  apply: 'patch',
  delete: 'delete',
  deleteCollection: 'deletecollection',
};

/** A Store whose Backend calls are recorded as RBAC verbs. */
function recordingBackend(): { backend: Backend; verbs: Set<string> } {
  const store = new Store({ clock: new VirtualClock(), types: [leaseType] });
  const verbs = new Set<string>();
  const backend = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof property !== 'string' || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const verb = VERB_OF[property];
        if (verb !== undefined) verbs.add(verb);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  }) as unknown as Backend;
  return { backend, verbs };
}

function permissions(): Permissions {
  const p = new Permissions();
  p.require(deploymentType, ['create', 'get', 'list', 'watch']);
  return p;
}

const sharded = (options: Partial<ManifestOptions> = {}) =>
  generateManifests(permissions(), { name: 'widgets', shardGroup: 'widgets', ...options });

function containerOf(deployment: Manifest): { args: string[] } {
  const spec = deployment.spec as { template: { spec: { containers: { args: string[] }[] } } };
  return spec.template.spec.containers[0] as { args: string[] };
}

function leaseRule(role: Manifest | undefined): { verbs: string[] } | undefined {
  return ((role?.rules ?? []) as { apiGroups: string[]; resources: string[]; verbs: string[] }[]).find(
    (r) => r.apiGroups[0] === 'coordination.k8s.io' && r.resources.includes('leases'),
  );
}

describe('generateManifests with a shard group', () => {
  it("grants on Leases exactly the verbs LeaseMembership's backend calls are (list, create, update, delete)", async () => {
    const { backend, verbs } = recordingBackend();
    const membership = new LeaseMembership({ backend, namespace: 'widgets-system', group: 'widgets' });
    const signal = new AbortController().signal;
    const record = {
      identity: 'widgets-0',
      epoch: 1,
      claim: ['widgets-0'],
      revoked: {},
      leaseDurationMs: 15_000,
      renewTime: '2026-12-07T01:02:03.000000Z',
    };
    // Every Membership method: join, read the group, renew, purge (the same as leaving).
    const created = await membership.create(record, signal);
    await membership.list(signal);
    const renewed = await membership.update({ ...record, epoch: 2 }, created, signal);
    await membership.delete('widgets-0', renewed, signal);
    await membership.delete('widgets-0', renewed, signal); // already gone: NotFound is fine
    expect([...verbs].sort()).toEqual([...LEASE_MEMBERSHIP_VERBS]);

    const set = sharded({ leaderElection: false });
    expect(set.leaderElection).toEqual([]);
    const [role, binding] = set.shardGroup;
    expect(role).toMatchObject({
      kind: 'Role',
      metadata: { name: 'widgets-shard-group-role', namespace: 'widgets-system' },
      rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: [...verbs].sort() }],
    });
    expect(binding).toMatchObject({
      kind: 'RoleBinding',
      metadata: { name: 'widgets-shard-group-rolebinding', namespace: 'widgets-system' },
      roleRef: { kind: 'Role', name: 'widgets-shard-group-role' },
      subjects: [{ kind: 'ServiceAccount', name: 'widgets', namespace: 'widgets-system' }],
    });
  });

  it("with leader election, the leader-election Role's one Lease rule holds both sets of verbs", () => {
    const set = sharded();
    expect(set.shardGroup).toEqual([]);
    expect(set.leaderElection.map((m) => m.kind)).toEqual(['Role', 'RoleBinding']);
    const rule = leaseRule(set.leaderElection[0]);
    expect(rule?.verbs).toEqual([...new Set([...LEASE_VERBS, ...LEASE_MEMBERSHIP_VERBS])].sort());
    expect(rule?.verbs).toEqual(['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']);
    // Without a shard group, leader election's verbs only: no delete.
    const plain = generateManifests(permissions(), { name: 'widgets' });
    expect(leaseRule(plain.leaderElection[0])?.verbs).toEqual([...LEASE_VERBS]);
  });

  it('runs two replicas as members of the group: --shard-group, the pod namespace for Leases, the pod name as identity', () => {
    const alone = sharded({ leaderElection: false });
    expect(alone.options.replicas).toBe(2);
    expect((alone.deployment.spec as { replicas: number }).replicas).toBe(2);
    expect(containerOf(alone.deployment).args).toEqual([
      'run',
      'src/operator.ts',
      '--shard-group',
      'widgets',
      '--lease-namespace',
      '$(POD_NAMESPACE)',
      '--identity',
      '$(POD_NAME)',
      '--metrics-bind-address',
      ':8080',
      '--health-probe-bind-address',
      ':8081',
    ]);
    // With leader election, the flags are not repeated.
    const both = runArgs(sharded({ replicas: 5 }).options);
    expect(both.filter((a) => a === '--identity')).toHaveLength(1);
    expect(both.filter((a) => a === '--lease-namespace')).toHaveLength(1);
    expect(both.slice(2, 12)).toEqual([
      '--leader-elect',
      '--lease-name',
      'widgets-leader',
      '--lease-namespace',
      '$(POD_NAMESPACE)',
      '--identity',
      '$(POD_NAME)',
      '--shard-group',
      'widgets',
      '--metrics-bind-address',
    ]);
    expect((sharded({ replicas: 5 }).deployment.spec as { replicas: number }).replicas).toBe(5);
    // Not sharded: one replica, as before.
    expect(generateManifests(permissions(), { name: 'widgets' }).options.replicas).toBe(1);
  });

  it('leaves out the leader fencing policy, says why in the Deployment file, and refuses asking for it', () => {
    for (const leaderElection of [true, false]) {
      const set = sharded({ leaderElection });
      expect(set.options.fencingPolicy).toBe(false);
      expect(set.fencing).toEqual([]);
      expect(set.objects.map((o) => o.kind)).not.toContain('ValidatingAdmissionPolicy');
      const files = configFiles(set);
      expect([...files.keys()].filter((f) => f.startsWith('policy/'))).toEqual([]);
      expect(files.get('manager/manager.yaml')).toContain(
        "# Sharded: the replicas are members of shard group widgets (Leases widgets.<pod> in\n# this namespace) and share the keys. No leader fencing policy: every member writes, and it\n# would refuse all but the leader's writes.",
      );
      expect(parse(files.get('manager/manager.yaml')?.split('---\n')[1] ?? '')).toEqual(set.deployment);
    }
    expect(
      configFiles(generateManifests(permissions(), { name: 'widgets' })).get('manager/manager.yaml'),
    ).not.toContain('# Sharded');
    expect(() => sharded({ fencingPolicy: true })).toThrow(OptionsError);
    expect(() => sharded({ fencingPolicy: true })).toThrow(/fencingPolicy.*shardGroup/);
    for (const shardGroup of ['Widgets', 'a.b', '-a', '', 'a'.repeat(64)])
      expect(() => sharded({ shardGroup }), shardGroup).toThrow(OptionsError);
    expect(() => sharded({ replicas: 1.5 })).toThrow(OptionsError);
  });

  it('grants announcing fences (POST /converge/fences) to leaders and shard members only', () => {
    const cluster = (options: Partial<ManifestOptions>) =>
      generateManifests(permissions(), { name: 'widgets', ...options }).roles[0]?.rules as unknown[];
    expect(cluster({ shardGroup: 'widgets', leaderElection: false })).toContainEqual(FENCES_RULE);
    expect(cluster({ shardGroup: 'widgets' })).toContainEqual(FENCES_RULE);
    expect(cluster({})).toContainEqual(FENCES_RULE);
    expect(cluster({ leaderElection: false })).not.toContainEqual(FENCES_RULE);
    expect(FENCES_RULE).toEqual({ nonResourceURLs: ['/converge/fences'], verbs: ['post'] });
  });

  it('lays the Role out in rbac/ and the chart, with replicaCount 2 as the value', () => {
    const set = sharded({ leaderElection: false });
    const files = configFiles(set);
    expect(files.has('rbac/shard_group_role.yaml')).toBe(true);
    expect(files.has('rbac/shard_group_role_binding.yaml')).toBe(true);
    expect(files.has('rbac/leader_election_role.yaml')).toBe(false);
    const kustomization = parse(files.get('kustomization.yaml') ?? '') as { resources: string[] };
    expect(kustomization.resources).toContain('rbac/shard_group_role.yaml');
    const chart = helmChart(set);
    expect(parse(chart.get('values.yaml') ?? '')).toMatchObject({ replicaCount: 2 });
    expect(chart.get('templates/deployment.yaml')).toContain('replicas: {{ .Values.replicaCount }}');
    expect(chart.get('templates/deployment.yaml')).toContain('# Sharded:');
    expect(chart.get('templates/deployment.yaml')).toContain('- --shard-group\n');
    const template = chart.get('templates/shard_group.yaml') ?? '';
    expect(template).toContain('name: widgets-shard-group-role\n  namespace: {{ .Release.Namespace }}\n');
    expect(template).toContain('name: widgets\n    namespace: {{ .Release.Namespace }}\n');
    expect(template).not.toContain('widgets-system');
    expect(chart.has('templates/leader_fencing.yaml')).toBe(false);
    // With leader election, its template holds the Lease verbs; no separate one.
    expect(helmChart(sharded()).has('templates/shard_group.yaml')).toBe(false);
  });
});
