/**
 * `converge manifests`: the RBAC derived from a fixture operator's wiring and declarations (exact
 * rules), every generated object accepted by the embedded API server under the real kubectl's
 * strict server-side validation, the kustomize base applied with `kubectl apply -k`, the Helm
 * templates rendered and applied, `--check` failing on drift (an edited file, a changed kind) and
 * passing when nothing changed, and the command line's malformed input.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type ApiServer, createApiServer } from '@converge/apiserver';
import { LEASE_MEMBERSHIP_VERBS } from '@converge/runtime';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { OperatorModuleError, parseCommand, UsageError } from '../src/index.ts';
import {
  defaultImage,
  localPackagesOf,
  nameFromPackage,
  operatorModules,
  runManifests,
} from '../src/manifests-cmd.ts';
import type { RunIo } from '../src/process-io.ts';
import { spawnConverge, within } from './processes.ts';

const exec = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURE = fileURLToPath(new URL('./fixtures/manifests-operator/', import.meta.url));
/**
 * Projects are copied below the repository (in its ignored `.converge/`): their modules import
 * `@converge/*`, which resolve from the repository's node_modules.
 */
const PROJECTS = join(ROOT, '.converge', 'test-projects');

let servers: { server: ApiServer; kubeconfig: string }[] = [];
const dirs: string[] = [];

function project(): string {
  mkdirSync(PROJECTS, { recursive: true });
  const dir = mkdtempSync(join(PROJECTS, 'manifests-'));
  dirs.push(dir);
  cpSync(FIXTURE, dir, { recursive: true });
  return dir;
}

async function apiServer(): Promise<{ server: ApiServer; kubeconfig: string }> {
  const dir = mkdtempSync(join(PROJECTS, 'server-'));
  dirs.push(dir);
  const kubeconfig = join(dir, 'kubeconfig');
  const server = createApiServer({ kubeconfigPath: kubeconfig });
  await server.listen();
  const started = { server, kubeconfig };
  servers.push(started);
  return started;
}

async function kubectl(
  kubeconfig: string,
  args: readonly string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(
      'kubectl',
      ['--kubeconfig', kubeconfig, '--request-timeout=20s', ...args],
      {
        timeout: 60_000,
      },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

function io(): RunIo & { lines: string[]; errors: string[] } {
  const lines: string[] = [];
  const errors: string[] = [];
  return {
    lines,
    errors,
    out: (line) => lines.push(line),
    err: (line) => errors.push(line),
    stopped: new Promise(() => {}),
  };
}

function args(...argv: string[]) {
  const parsed = parseCommand(['manifests', ...argv]);
  if (parsed.command !== 'manifests') throw new Error(`not manifests: ${parsed.command}`);
  return parsed;
}

function docs(path: string): Record<string, unknown>[] {
  return parseAllDocuments(readFileSync(path, 'utf8')).map((d) => d.toJS() as Record<string, unknown>);
}

beforeAll(() => mkdirSync(PROJECTS, { recursive: true }));

afterAll(async () => {
  for (const { server } of servers) await server.close();
  servers = [];
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('converge manifests', () => {
  let dir: string;
  let out: ReturnType<typeof io>;

  beforeAll(async () => {
    dir = project();
    out = io();
    expect(await runManifests(args('--helm'), out, dir)).toBe(0);
  });

  it('derives the RBAC from the wiring and adds the declared rules, exactly', () => {
    const [clusterRole, ...rest] = docs(join(dir, 'config/rbac/role.yaml'));
    expect(rest).toEqual([]);
    expect(clusterRole).toMatchObject({
      kind: 'ClusterRole',
      metadata: { name: 'website-operator-manager-role' },
    });
    expect(clusterRole?.rules).toEqual([
      { apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
      { apiGroups: [''], resources: ['services'], verbs: ['create', 'delete', 'get'] },
      {
        apiGroups: ['apps'],
        resources: ['deployments'],
        verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
      },
      { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
      {
        apiGroups: ['example.converge.dev'],
        resources: ['websites'],
        verbs: ['get', 'list', 'patch', 'update', 'watch'],
      },
      { apiGroups: ['example.converge.dev'], resources: ['websites/finalizers'], verbs: ['update'] },
      {
        apiGroups: ['example.converge.dev'],
        resources: ['websites/status'],
        verbs: ['get', 'patch', 'update'],
      },
      // The leader announces its fence; a cluster answers 404 (it does not fence) only when allowed to.
      { nonResourceURLs: ['/converge/fences'], verbs: ['post'] },
    ]);
    const [electionRole] = docs(join(dir, 'config/rbac/leader_election_role.yaml'));
    expect(electionRole).toMatchObject({
      kind: 'Role',
      metadata: { namespace: 'website-operator-system' },
      rules: [
        { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
        {
          apiGroups: ['coordination.k8s.io'],
          resources: ['leases'],
          verbs: ['create', 'get', 'list', 'patch', 'update', 'watch'],
        },
        { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
      ],
    });
  });

  it('writes a hardened Deployment running converge run with leader election, probes and metrics', () => {
    const [deployment] = docs(join(dir, 'config/manager/manager.yaml'));
    const pod = (deployment as { spec: { template: { spec: Record<string, unknown> } } }).spec.template.spec;
    const [container] = pod.containers as Record<string, unknown>[];
    expect(pod.serviceAccountName).toBe('website-operator');
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container?.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(container?.args).toEqual([
      'run',
      'src/operator.ts',
      '--leader-elect',
      '--lease-name',
      'website-operator-leader',
      '--lease-namespace',
      '$(POD_NAMESPACE)',
      '--identity',
      '$(POD_NAME)',
      '--metrics-bind-address',
      ':8080',
      '--health-probe-bind-address',
      ':8081',
    ]);
    // The arguments are ones converge run accepts.
    const run = parseCommand(
      ((container?.args ?? []) as string[]).map((a) => a.replace('$(POD_NAMESPACE)', 'ns')),
    );
    expect(run).toMatchObject({
      command: 'run',
      leaderElect: true,
      leaseNamespace: 'ns',
      identity: '$(POD_NAME)',
    });
    expect(container?.ports).toContainEqual({ name: 'metrics', containerPort: 8080, protocol: 'TCP' });
    expect(container?.livenessProbe).toMatchObject({ httpGet: { path: '/healthz', port: 'probes' } });
    expect(container?.readinessProbe).toMatchObject({ httpGet: { path: '/readyz', port: 'probes' } });
    expect(container?.env).toEqual([
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    ]);
    const dockerfile = readFileSync(join(dir, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^FROM node:24-slim AS build$/m);
    expect(dockerfile).toMatch(/^RUN npm ci --omit=dev$/m);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^ENV NODE_OPTIONS=--max-semi-space-size=8$/m);
    expect(dockerfile).toMatch(/^ENTRYPOINT \["node", "node_modules\/@converge\/cli\/bin\/converge.js"\]$/m);
    // The entrypoint names the package's real bin.
    const cli = JSON.parse(readFileSync(join(ROOT, 'packages/cli/package.json'), 'utf8')) as {
      bin: { converge: string };
    };
    expect(`node_modules/@converge/cli/${cli.bin.converge.replace(/^\.\//, '')}`).toBe(
      'node_modules/@converge/cli/bin/converge.js',
    );
  });

  it('writes the leader fencing policy, fencing what the RBAC lets the operator write; --no-fencing-policy leaves it out', async () => {
    const [policy, binding] = docs(join(dir, 'config/policy/leader_fencing.yaml'));
    expect(policy).toMatchObject({
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'website-operator-leader-fencing' },
      spec: { paramKind: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' } },
    });
    expect(binding).toMatchObject({
      kind: 'ValidatingAdmissionPolicyBinding',
      spec: {
        policyName: 'website-operator-leader-fencing',
        paramRef: {
          name: 'website-operator-leader',
          namespace: 'website-operator-system',
          parameterNotFoundAction: 'Allow',
        },
      },
    });
    // The resources of the ClusterRole's rules with a write verb, less Events.
    const [clusterRole] = docs(join(dir, 'config/rbac/role.yaml'));
    const writable = (
      (clusterRole?.rules ?? []) as { apiGroups: string[]; resources: string[]; verbs: string[] }[]
    )
      // Resource rules only: announcing the fence (POST /converge/fences) is a non-resource rule.
      .filter((r) => r.resources !== undefined)
      .filter((r) => r.verbs.some((v) => !['get', 'list', 'watch'].includes(v)))
      .flatMap((r) => r.resources.map((res) => `${r.apiGroups[0]} ${res}`))
      .filter((r) => !r.endsWith(' events'))
      .sort();
    const spec = policy?.spec as {
      matchConstraints: {
        resourceRules: { apiGroups: string[]; resources: string[]; operations: string[] }[];
      };
    };
    const fenced = spec.matchConstraints.resourceRules
      .flatMap((r) => r.resources.map((res) => `${r.apiGroups[0]} ${res}`))
      .sort();
    expect(fenced).toEqual(writable);
    expect(fenced).toEqual([
      ' services',
      'apps deployments',
      'example.converge.dev websites',
      'example.converge.dev websites/finalizers',
      'example.converge.dev websites/status',
    ]);
    expect(docs(join(dir, 'config/kustomization.yaml'))[0]?.resources).toContain(
      'policy/leader_fencing.yaml',
    );
    expect(readFileSync(join(dir, 'chart/templates/leader_fencing.yaml'), 'utf8')).toContain(
      "'system:serviceaccount:{{ .Release.Namespace }}:website-operator'",
    );

    const without = project();
    const run = io();
    expect(await runManifests(args('--no-fencing-policy', '--helm'), run, without)).toBe(0);
    expect(existsSync(join(without, 'config/policy'))).toBe(false);
    expect(existsSync(join(without, 'chart/templates/leader_fencing.yaml'))).toBe(false);
    expect(docs(join(without, 'config/kustomization.yaml'))[0]?.resources).not.toContain(
      'policy/leader_fencing.yaml',
    );
    // Still leader election, with the pod's name as identity.
    const [deployment] = docs(join(without, 'config/manager/manager.yaml'));
    expect(JSON.stringify(deployment)).toContain('"--identity","$(POD_NAME)"');
    expect(args('--no-leader-elect')).toMatchObject({ leaderElection: false, fencingPolicy: false });
    expect(args()).toMatchObject({ leaderElection: true, fencingPolicy: true });
    // Turning the policy off and --check: the policy left on disk is reported as stale.
    const check = io();
    expect(await runManifests(args('--no-fencing-policy', '--check'), check, dir)).toBe(1);
    expect(check.errors).toContain(
      'converge manifests: no longer generated: config/policy/leader_fencing.yaml',
    );
  });

  it('every generated object is accepted by kubectl apply --server-side --validate=strict', async () => {
    const { kubeconfig } = await apiServer();
    const order = docs(join(dir, 'config/kustomization.yaml'))[0]?.resources as string[];
    expect(order.length).toBeGreaterThan(8);
    for (const file of order) {
      const result = await kubectl(kubeconfig, [
        'apply',
        '--server-side',
        '--validate=strict',
        '-f',
        join(dir, 'config', file),
      ]);
      expect(result, file).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toMatch(/serverside-applied/);
    }
    const crd = await kubectl(kubeconfig, [
      'wait',
      '--for=condition=established',
      'crd/websites.example.converge.dev',
    ]);
    expect(crd.code).toBe(0);
    const site = await kubectl(kubeconfig, ['get', 'websites', '-A', '-o', 'name']);
    expect(site).toMatchObject({ code: 0, stderr: expect.stringMatching(/^(No resources found)?/) });
  });

  it('the kustomize base is accepted by kubectl apply -k, in the operator namespace', async () => {
    const { kubeconfig } = await apiServer();
    const kustomization = docs(join(dir, 'config/kustomization.yaml'))[0];
    expect(kustomization?.namespace).toBe('website-operator-system');
    const result = await kubectl(kubeconfig, [
      'apply',
      '--server-side',
      '--validate=strict',
      '-k',
      join(dir, 'config'),
    ]);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain('deployment.apps/website-operator serverside-applied');
    const sa = await kubectl(kubeconfig, [
      'get',
      'serviceaccount',
      'website-operator',
      '-n',
      'website-operator-system',
      '-o',
      'name',
    ]);
    expect(sa.stdout.trim()).toBe('serviceaccount/website-operator');
  });

  it('the Helm templates, rendered with their values, are accepted too', async () => {
    const { kubeconfig } = await apiServer();
    const values = docs(join(dir, 'chart/values.yaml'))[0] as {
      image: { repository: string; tag: string; pullPolicy: string };
      replicaCount: number;
      resources: object;
    };
    expect(values.image).toEqual({
      repository: 'website-operator',
      tag: '0.1.0',
      pullPolicy: 'IfNotPresent',
    });
    const render = (text: string): string =>
      text
        .replaceAll('{{ .Release.Namespace }}', 'operators')
        .replaceAll('{{ .Values.image.repository }}', values.image.repository)
        .replaceAll('{{ .Values.image.tag }}', values.image.tag)
        .replaceAll('{{ .Values.image.pullPolicy }}', values.image.pullPolicy)
        .replaceAll('{{ .Values.replicaCount }}', String(values.replicaCount))
        .replace(
          /\n\{\{- toYaml \.Values\.resources \| nindent (\d+) \}\}/g,
          (_, n: string) =>
            `\n${stringify(values.resources)
              .trimEnd()
              .replace(/^/gm, ' '.repeat(Number(n)))}`,
        );
    expect(await kubectl(kubeconfig, ['create', 'namespace', 'operators'])).toMatchObject({ code: 0 });
    const crd = await kubectl(kubeconfig, [
      'apply',
      '--server-side',
      '--validate=strict',
      '-f',
      join(dir, 'chart/crds'),
    ]);
    expect(crd).toMatchObject({ code: 0, stderr: '' });
    for (const file of [
      'service_account',
      'role',
      'role_binding',
      'leader_election',
      'leader_fencing',
      'deployment',
      'metrics_service',
    ]) {
      const text = readFileSync(join(dir, `chart/templates/${file}.yaml`), 'utf8');
      // Everything but the ClusterRole is in (or, bindings, points to) the release's namespace.
      if (file !== 'role') expect(text).toContain('{{ .Release.Namespace }}');
      const rendered = join(dir, `rendered-${file}.yaml`);
      writeFileSync(rendered, render(text));
      expect(readFileSync(rendered, 'utf8')).not.toContain('{{');
      const result = await kubectl(kubeconfig, [
        'apply',
        '--server-side',
        '--validate=strict',
        '-f',
        rendered,
      ]);
      expect(result, file).toMatchObject({ code: 0, stderr: '' });
    }
    const image = await kubectl(kubeconfig, [
      'get',
      'deployment',
      'website-operator',
      '-n',
      'operators',
      '-o',
      'jsonpath={.spec.template.spec.containers[0].image}',
    ]);
    expect(image.stdout).toBe('website-operator:0.1.0');
  });

  it('is deterministic: a second run changes nothing and keeps the Dockerfile unless --force', async () => {
    writeFileSync(join(dir, 'Dockerfile'), 'FROM scratch\n');
    const again = io();
    expect(await runManifests(args('--helm'), again, dir)).toBe(0);
    expect(again.lines.filter((l) => l.includes('wrote'))).toEqual([]);
    expect(again.lines.at(-1)).toContain('(0 changed)');
    expect(readFileSync(join(dir, 'Dockerfile'), 'utf8')).toBe('FROM scratch\n');
    const forced = io();
    expect(await runManifests(args('--helm', '--force'), forced, dir)).toBe(0);
    expect(forced.lines).toContain('converge manifests: wrote Dockerfile');
    expect(readFileSync(join(dir, 'Dockerfile'), 'utf8')).toMatch(/^FROM node:24-slim$/m);
  });

  it('--check passes unchanged, and fails listing an edited file and a stale one', async () => {
    const clean = io();
    expect(await runManifests(args('--check', '--helm'), clean, dir)).toBe(0);
    expect(clean.errors).toEqual([]);
    const role = join(dir, 'config/rbac/role.yaml');
    const original = readFileSync(role, 'utf8');
    writeFileSync(role, original.replace('- watch', '- watch\n      - delete'));
    const stale = join(dir, 'config/crd/gone.example.com.yaml');
    writeFileSync(stale, readFileSync(join(dir, 'config/namespace.yaml'), 'utf8'));
    const drift = io();
    expect(await runManifests(args('--check', '--helm'), drift, dir)).toBe(1);
    expect(drift.errors).toEqual([
      'converge manifests: out of date: config/rbac/role.yaml',
      'converge manifests: no longer generated: config/crd/gone.example.com.yaml',
      expect.stringMatching(
        /^converge manifests: 2 files differ from what src\/operator\.ts generates; run converge manifests/,
      ),
    ]);
    // --check wrote nothing.
    expect(readFileSync(role, 'utf8')).not.toBe(original);
    expect(existsSync(stale)).toBe(true);
    const fixed = io();
    expect(await runManifests(args('--helm'), fixed, dir)).toBe(0);
    expect(fixed.lines).toContain('converge manifests: wrote config/rbac/role.yaml');
    expect(fixed.lines).toContain(
      'converge manifests: removed config/crd/gone.example.com.yaml (no longer generated)',
    );
    expect(readFileSync(role, 'utf8')).toBe(original);
  });

  it('--check (a real process) fails when a TypeScript kind changed and its CRD was not regenerated', async () => {
    const changed = project();
    expect(await runManifests(args(), io(), changed)).toBe(0);
    const kinds = join(changed, 'src/kinds.ts');
    writeFileSync(
      kinds,
      readFileSync(kinds, 'utf8').replace(
        'domain: Type.String({ minLength: 1 })',
        'domain: Type.String({ minLength: 3 })',
      ),
    );
    const check = spawnConverge(changed, ['manifests', '--check']);
    const exit = await within('converge manifests --check', check.exited, check.output);
    expect(exit.code).toBe(1);
    expect(check.stderr()).toContain(
      'converge manifests: out of date: config/crd/websites.example.converge.dev.yaml',
    );
    expect(check.stderr()).not.toContain('config/rbac');
    const write = spawnConverge(changed, ['manifests']);
    expect((await within('converge manifests', write.exited, write.output)).code).toBe(0);
    expect(readFileSync(join(changed, 'config/crd/websites.example.converge.dev.yaml'), 'utf8')).toContain(
      'minLength: 3',
    );
    const again = spawnConverge(changed, ['manifests', '--check']);
    expect((await within('converge manifests --check', again.exited, again.output)).code).toBe(0);
    expect(again.stdout()).toMatch(/files up to date/);
  });

  it('a namespaced declaration becomes a Role and RoleBinding in that namespace, and kustomize keeps it there', async () => {
    const both = project();
    const run = io();
    expect(
      await runManifests(
        args('src/operator.ts', 'src/namespaced.ts', '--name', 'web', '--namespace', 'web-ops'),
        run,
        both,
      ),
    ).toBe(0);
    const roles = docs(join(both, 'config/rbac/role.yaml'));
    expect(roles.map((r) => [r.kind, (r.metadata as { namespace?: string }).namespace])).toEqual([
      ['ClusterRole', undefined],
      ['Role', 'default'],
    ]);
    expect(roles[1]?.rules).toEqual([
      { apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'update'] },
    ]);
    const bindings = docs(join(both, 'config/rbac/role_binding.yaml'));
    expect(bindings[1]).toMatchObject({
      kind: 'RoleBinding',
      metadata: { name: 'web-manager-rolebinding', namespace: 'default' },
      subjects: [{ kind: 'ServiceAccount', name: 'web', namespace: 'web-ops' }],
    });
    expect(docs(join(both, 'config/kustomization.yaml'))[0]?.namespace).toBeUndefined();
    const { kubeconfig } = await apiServer();
    const applied = await kubectl(kubeconfig, [
      'apply',
      '--server-side',
      '--validate=strict',
      '-k',
      join(both, 'config'),
    ]);
    expect(applied).toMatchObject({ code: 0, stderr: '' });
    const role = await kubectl(kubeconfig, [
      'get',
      'role',
      'web-manager-role',
      '-n',
      'default',
      '-o',
      'name',
    ]);
    expect(role.stdout.trim()).toBe('role.rbac.authorization.k8s.io/web-manager-role');
  });

  it('--shard-group: two replicas as members of the group, a Role for the member Leases, no leader fencing policy', async () => {
    const sharded = project();
    const run = io();
    expect(
      await runManifests(args('--shard-group', 'websites', '--no-leader-elect', '--helm'), run, sharded),
    ).toBe(0);
    expect(run.lines.at(-1)).toContain(', 2 replicas in shard group websites;');
    const [deployment] = docs(join(sharded, 'config/manager/manager.yaml'));
    const spec = (
      deployment as { spec: { replicas: number; template: { spec: { containers: { args: string[] }[] } } } }
    ).spec;
    expect(spec.replicas).toBe(2);
    const container = spec.template.spec.containers[0];
    expect(container?.args).toEqual([
      'run',
      'src/operator.ts',
      '--shard-group',
      'websites',
      '--lease-namespace',
      '$(POD_NAMESPACE)',
      '--identity',
      '$(POD_NAME)',
      '--metrics-bind-address',
      ':8080',
      '--health-probe-bind-address',
      ':8081',
    ]);
    // Arguments converge run accepts, as a member of the group.
    expect(
      parseCommand((container?.args ?? []).map((a) => a.replace('$(POD_NAMESPACE)', 'ns'))),
    ).toMatchObject({
      command: 'run',
      leaderElect: false,
      shardGroup: 'websites',
      leaseNamespace: 'ns',
      identity: '$(POD_NAME)',
    });
    expect(readFileSync(join(sharded, 'config/manager/manager.yaml'), 'utf8')).toContain(
      '# Sharded: the replicas are members of shard group websites',
    );
    // The Lease verbs LeaseMembership uses, in the operator's namespace; no leader election Role.
    expect(docs(join(sharded, 'config/rbac/shard_group_role.yaml'))).toEqual([
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: {
          name: 'website-operator-shard-group-role',
          namespace: 'website-operator-system',
          labels: {
            'app.kubernetes.io/name': 'website-operator',
            'app.kubernetes.io/managed-by': 'converge',
          },
        },
        rules: [
          { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: [...LEASE_MEMBERSHIP_VERBS] },
        ],
      },
    ]);
    expect(existsSync(join(sharded, 'config/rbac/leader_election_role.yaml'))).toBe(false);
    expect(existsSync(join(sharded, 'config/policy'))).toBe(false);
    expect(existsSync(join(sharded, 'chart/templates/leader_fencing.yaml'))).toBe(false);
    expect(docs(join(sharded, 'chart/values.yaml'))[0]).toMatchObject({ replicaCount: 2 });
    expect(readFileSync(join(sharded, 'chart/templates/shard_group.yaml'), 'utf8')).toContain(
      'website-operator-shard-group-role',
    );
    // Every object is accepted, the ClusterRole's non-resource rule and the member Role included.
    const { kubeconfig } = await apiServer();
    const applied = await kubectl(kubeconfig, [
      'apply',
      '--server-side',
      '--validate=strict',
      '-k',
      join(sharded, 'config'),
    ]);
    expect(applied).toMatchObject({ code: 0, stderr: '' });
    expect(applied.stdout).toContain(
      'role.rbac.authorization.k8s.io/website-operator-shard-group-role serverside-applied',
    );

    // With leader election too: one Role holds both sets of Lease verbs; --replicas is taken.
    const both = project();
    expect(await runManifests(args('--shard-group', 'websites', '--replicas', '4'), io(), both)).toBe(0);
    expect(
      (docs(join(both, 'config/manager/manager.yaml'))[0] as { spec: { replicas: number } }).spec.replicas,
    ).toBe(4);
    expect(existsSync(join(both, 'config/rbac/shard_group_role.yaml'))).toBe(false);
    expect(existsSync(join(both, 'config/policy'))).toBe(false);
    const [electionRole] = docs(join(both, 'config/rbac/leader_election_role.yaml'));
    expect(electionRole?.rules).toContainEqual({
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    });
    const manager = readFileSync(join(both, 'config/manager/manager.yaml'), 'utf8');
    expect(manager.match(/- --identity\n/g)).toHaveLength(1);
    expect(manager).toContain('- --leader-elect\n');
    expect(manager).toContain('- --shard-group\n');

    // --shard-by uid reaches converge run, whose own parser takes the Deployment's args.
    const byUid = project();
    expect(await runManifests(args('--shard-group', 'websites', '--shard-by', 'uid'), io(), byUid)).toBe(0);
    const [uidDeployment] = docs(join(byUid, 'config/manager/manager.yaml'));
    const runArgs = (
      (uidDeployment as { spec: { template: { spec: { containers: { args: string[] }[] } } } }).spec.template
        .spec.containers[0]?.args ?? []
    ).map((a) => a.replace(/\$\((POD_NAMESPACE|POD_NAME)\)/, 'x'));
    expect(parseCommand(runArgs)).toMatchObject({ command: 'run', shardGroup: 'websites', shardBy: 'uid' });
    expect(() => parseCommand(['manifests', '--shard-by', 'uid'])).toThrow(
      'converge manifests: --shard-by is only used with --shard-group',
    );
    expect(() => parseCommand(['manifests', '--shard-group', 'w', '--shard-by', 'name'])).toThrow(
      'converge manifests: --shard-by must be key or uid, got "name"',
    );
  });

  it('--check: sharding an operator reports the Deployment, the Lease Role and the kustomization out of date and the fencing policy stale', async () => {
    const moving = project();
    expect(await runManifests(args(), io(), moving)).toBe(0);
    const check = io();
    expect(await runManifests(args('--shard-group', 'websites', '--check'), check, moving)).toBe(1);
    expect(check.errors).toEqual([
      'converge manifests: out of date: config/rbac/leader_election_role.yaml',
      'converge manifests: out of date: config/manager/manager.yaml',
      'converge manifests: out of date: config/kustomization.yaml',
      'converge manifests: no longer generated: config/policy/leader_fencing.yaml',
      expect.stringMatching(/^converge manifests: 4 files differ from what src\/operator\.ts generates/),
    ]);
    const written = io();
    expect(await runManifests(args('--shard-group', 'websites'), written, moving)).toBe(0);
    expect(written.lines).toContain(
      'converge manifests: removed config/policy/leader_fencing.yaml (no longer generated)',
    );
    expect(await runManifests(args('--shard-group', 'websites', '--check'), io(), moving)).toBe(0);
    // The same group with other replicas is a change too.
    expect(
      await runManifests(args('--shard-group', 'websites', '--replicas', '3', '--check'), io(), moving),
    ).toBe(1);
  });

  it('webhooks are served in managed mode: a webhook port and Service, and the RBAC managed mode needs', async () => {
    const hooked = project();
    expect(await runManifests(args('src/operator.ts', 'src/webhooks.ts'), io(), hooked)).toBe(0);
    const [deployment] = docs(join(hooked, 'config/manager/manager.yaml'));
    const container = (
      deployment as { spec: { template: { spec: { containers: Record<string, unknown>[] } } } }
    ).spec.template.spec.containers[0];
    const runArgs = (container?.args ?? []) as string[];
    expect(runArgs.slice(-4)).toEqual([
      '--webhook-port',
      '9443',
      '--webhook-service',
      '$(POD_NAMESPACE)/website-operator-webhook-service',
    ]);
    expect(parseCommand(runArgs.map((a) => a.replace('$(POD_NAMESPACE)', 'ns')))).toMatchObject({
      command: 'run',
      webhookPort: 9443,
      webhookService: { namespace: 'ns', name: 'website-operator-webhook-service' },
    });
    expect(container?.ports).toContainEqual({ name: 'webhook-server', containerPort: 9443, protocol: 'TCP' });
    const [service] = docs(join(hooked, 'config/manager/webhook_service.yaml'));
    expect(service).toMatchObject({
      kind: 'Service',
      spec: { ports: [{ name: 'webhook', port: 443, protocol: 'TCP', targetPort: 'webhook-server' }] },
    });
    const roles = docs(join(hooked, 'config/rbac/role.yaml'));
    expect(roles[0]?.rules).toContainEqual({
      apiGroups: ['admissionregistration.k8s.io'],
      resources: ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'],
      verbs: ['create', 'delete', 'get', 'list', 'update', 'watch'],
    });
    expect(roles[1]).toMatchObject({
      kind: 'Role',
      metadata: { namespace: 'website-operator-system' },
      rules: [
        { apiGroups: [''], resources: ['secrets'], verbs: ['create', 'get', 'list', 'update', 'watch'] },
      ],
    });
    // The Role is in the operator's namespace: the kustomize base keeps its namespace.
    expect(docs(join(hooked, 'config/kustomization.yaml'))[0]?.namespace).toBe('website-operator-system');
    const { kubeconfig } = await apiServer();
    const applied = await kubectl(kubeconfig, [
      'apply',
      '--server-side',
      '--validate=strict',
      '-k',
      join(hooked, 'config'),
    ]);
    expect(applied).toMatchObject({ code: 0, stderr: '' });
    expect(applied.stdout).toContain('service/website-operator-webhook-service serverside-applied');
  });

  it('a module outside the project, or a module that is missing, is an error before anything is written', async () => {
    const empty = project();
    await expect(runManifests(args('../elsewhere.ts'), io(), empty)).rejects.toThrow(/lies outside/);
    await expect(runManifests(args('src/missing.ts'), io(), empty)).rejects.toThrow(/does not exist/);
    expect(existsSync(join(empty, 'config'))).toBe(false);
  });
});

describe('converge manifests command line', () => {
  it('rejects bad flags with a usage error naming them, and a real process exits 2', async () => {
    for (const [argv, message] of [
      [['--name', 'Bad_Name'], /--name must be a DNS label/],
      [['--namespace', '-x'], /--namespace needs a value/],
      [['--image', 'a b'], /--image must be an image reference/],
      [['--check', '--force'], /--check writes nothing/],
      [['operator.py'], /a module is a \.ts or \.js file/],
      [['--bogus'], /unknown option --bogus/],
      [['--helm=yes'], /--helm takes no value/],
      [['--shard-group', 'Websites'], /--shard-group must be a DNS label/],
      [['--shard-group', 'a.b'], /--shard-group must be a DNS label/],
      [['--shard-group', 'a'.repeat(64)], /--shard-group must be a DNS label/],
      [['--shard-group'], /--shard-group needs a value/],
      [['--replicas', '0'], /--replicas must be a whole number from 1 to 1000, got "0"/],
      [['--replicas', '-1'], /--replicas needs a value|--replicas must be a whole number/],
      [['--replicas', '1.5'], /--replicas must be a whole number/],
      [['--replicas', '1001'], /--replicas must be a whole number/],
      [['--replicas', 'two'], /--replicas must be a whole number/],
      [['--replicas', '3', '--no-leader-elect'], /would run every key on every replica; add --shard-group/],
    ] as const) {
      expect(() => parseCommand(['manifests', ...argv])).toThrow(message);
    }
    const child = spawnConverge(ROOT, ['manifests', '--name', 'NOPE']);
    const exit = await within('converge manifests --name NOPE', child.exited, child.output);
    expect(exit.code).toBe(2);
    expect(child.stderr()).toContain('converge manifests: --name must be a DNS label');
    expect(child.stderr()).toContain('Usage: converge manifests');
    const sharded = spawnConverge(ROOT, ['manifests', '--shard-group', 'No_Group']);
    expect(
      (await within('converge manifests --shard-group No_Group', sharded.exited, sharded.output)).code,
    ).toBe(2);
    expect(sharded.stderr()).toContain('converge manifests: --shard-group must be a DNS label');
    // Accepted: the defaults, one replica without leader election, a group with its replicas.
    expect(args('--shard-group', 'websites')).toMatchObject({
      shardGroup: 'websites',
      replicas: undefined,
      leaderElection: true,
      fencingPolicy: false,
    });
    expect(args('--replicas', '1', '--no-leader-elect')).toMatchObject({
      replicas: 1,
      shardGroup: undefined,
    });
    expect(args('--replicas', '3')).toMatchObject({ replicas: 3, fencingPolicy: true });
    expect(args('--shard-group', 'w', '--replicas', '1000', '--no-fencing-policy')).toMatchObject({
      replicas: 1000,
      fencingPolicy: false,
    });
  });

  it('any argument list parses or fails with a UsageError, never anything else', () => {
    const token = fc.oneof(
      fc.constantFrom(
        '--out',
        '--name',
        '--namespace',
        '--image',
        '--check',
        '--helm',
        '--force',
        '--no-leader-elect',
        '--shard-group',
        '--replicas',
        '-h',
        '--',
        '-',
      ),
      fc.string({ maxLength: 12 }),
      fc.stringMatching(/^--[a-z-]{1,12}(=[^\s]{0,6})?$/),
    );
    fc.assert(
      fc.property(fc.array(token, { maxLength: 8 }), (argv) => {
        try {
          const parsed = parseCommand(['manifests', ...argv]);
          expect(['manifests', 'help']).toContain(parsed.command);
        } catch (error) {
          expect(error).toBeInstanceOf(UsageError);
          expect((error as UsageError).message).toMatch(/^converge manifests: /);
          expect((error as UsageError).message).not.toContain('\n');
        }
      }),
    );
  });

  it('the operator name comes from the package name: a DNS label starting with a letter, or none', () => {
    expect(nameFromPackage('@acme/Website_Operator')).toBe('website-operator');
    expect(nameFromPackage('123')).toBeUndefined();
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (name) => {
        const derived = nameFromPackage(name);
        if (derived !== undefined) expect(derived).toMatch(/^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$/);
      }),
    );
  });

  it('modules default to package.json converge.module (a path or a list), else src/operator.ts', async () => {
    const dir = project();
    expect(await operatorModules([], dir)).toEqual(['src/operator.ts']);
    expect(await operatorModules(['a.ts'], dir)).toEqual(['a.ts']);
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'x', converge: { module: ['a.ts', 'b.ts'] } }),
    );
    expect(await operatorModules([], dir)).toEqual(['a.ts', 'b.ts']);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'x' }));
    expect(await operatorModules([], dir)).toEqual(['src/operator.ts']);
    writeFileSync(join(dir, 'package.json'), '{ not json');
    await expect(operatorModules([], dir)).rejects.toThrow(UsageError);
  });

  it('with no module given nor configured, src/operator.ts else operator.ts (the README puts it at the root); neither: one message naming both and how to say where it is', async () => {
    const dir = mkdtempSync(join(PROJECTS, 'modules-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'x', type: 'module' }));
    const missing = await operatorModules([], dir).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(missing).toBeInstanceOf(OperatorModuleError);
    expect((missing as Error).message).toBe(
      `operator module src/operator.ts does not exist, nor does operator.ts (in ${dir}): give the module's path ` +
        '(converge manifests path/to/operator.ts) or name it in package.json ("converge": { "module": "path/to/operator.ts" })',
    );
    writeFileSync(join(dir, 'operator.ts'), 'export default function operator(): void {}\n');
    expect(await operatorModules([], dir)).toEqual(['operator.ts']);
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src', 'operator.ts'), 'export default function operator(): void {}\n');
    expect(await operatorModules([], dir)).toEqual(['src/operator.ts']);
  });

  it('dev --nats takes a NATS URL (a list of them too), and is a dev flag only', () => {
    expect(parseCommand(['dev', '--nats', 'nats://127.0.0.1:4222'])).toMatchObject({
      command: 'dev',
      nats: 'nats://127.0.0.1:4222',
    });
    expect(parseCommand(['dev', '--nats', 'nats://a:4222,tls://b:4222'])).toMatchObject({
      nats: 'nats://a:4222,tls://b:4222',
    });
    expect(parseCommand(['dev'])).toMatchObject({ command: 'dev', nats: undefined });
    expect(() => parseCommand(['dev', '--nats', ''])).toThrow(/--nats needs a value/);
    for (const bad of ['127.0.0.1:4222', 'http://x:4222', 'nats://', 'nats://a,']) {
      expect(() => parseCommand(['dev', '--nats', bad]), bad).toThrow(
        /--nats must be a NATS server URL such as nats:\/\/127\.0\.0\.1:4222/,
      );
    }
    expect(() => parseCommand(['serve', '--nats', 'nats://x:4222'])).toThrow(/only used by converge dev/);
  });

  it('dev --as-service-account is a dev flag only, and needs tokens', () => {
    expect(parseCommand(['dev', '--as-service-account'])).toMatchObject({
      command: 'dev',
      asServiceAccount: true,
    });
    expect(parseCommand(['dev'])).toMatchObject({ command: 'dev', asServiceAccount: false });
    expect(() => parseCommand(['serve', '--as-service-account'])).toThrow(/only used by converge dev/);
    expect(() => parseCommand(['dev', '--as-service-account', '--insecure'])).toThrow(/needs tokens checked/);
  });
});

describe('localPackagesOf', () => {
  const project = '/work/project';
  it("lists the project's file: dependencies (not devDependencies) for the Dockerfile", () => {
    expect(
      localPackagesOf(
        {
          dependencies: {
            '@converge/cli': 'file:./vendor/converge-cli-0.1.0.tgz',
            '@converge/kube': 'file:vendor/converge-kube-0.1.0.tgz',
            yaml: '^2.9.1',
          },
          optionalDependencies: { local: 'file:packages/local' },
        },
        project,
      ),
    ).toEqual({
      paths: ['vendor/converge-cli-0.1.0.tgz', 'vendor/converge-kube-0.1.0.tgz', 'packages/local'],
      outside: [],
    });
    expect(localPackagesOf({ dependencies: 'nonsense' }, project)).toEqual({ paths: [], outside: [] });
  });

  it('names a file: dependency outside the project (the image build cannot copy it) and copies none', () => {
    for (const spec of ['file:../packs/converge-cli-0.1.0.tgz', 'file:/tmp/packs/x.tgz', 'file:.']) {
      const { paths, outside } = localPackagesOf({ dependencies: { '@converge/cli': spec } }, project);
      expect(paths).toEqual([]);
      expect(outside).toEqual([{ name: '@converge/cli', spec }]);
    }
  });

  it('warns once, naming every tarball outside the project (a project made with --packages has 8), when it writes the Dockerfile', async () => {
    // A copy of the fixture project (`project` is this block's own folder here).
    mkdirSync(PROJECTS, { recursive: true });
    const dir = mkdtempSync(join(PROJECTS, 'manifests-'));
    dirs.push(dir);
    cpSync(FIXTURE, dir, { recursive: true });
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    pkg.dependencies = Object.fromEntries(
      ['apiserver', 'cli', 'kube', 'runtime'].map((p) => [
        `@converge/${p}`,
        `file:/tmp/packs/converge-${p}-0.1.0.tgz`,
      ]),
    );
    writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg));
    const out = io();
    expect(await runManifests(args(), out, dir)).toBe(0);
    expect(out.errors).toEqual([
      'converge manifests: warning: 4 dependencies are file: paths outside the project, which the ' +
        'Dockerfile\'s build cannot copy: @converge/apiserver ("file:/tmp/packs/converge-apiserver-0.1.0.tgz"), ' +
        '@converge/cli ("file:/tmp/packs/converge-cli-0.1.0.tgz"), @converge/kube ("file:/tmp/packs/converge-kube-0.1.0.tgz"), ' +
        '@converge/runtime ("file:/tmp/packs/converge-runtime-0.1.0.tgz"); move them into the project ' +
        '(e.g. vendor/, npm install ./vendor/*.tgz) and run converge manifests --force',
    ]);
  });

  it('the image defaults to NAME:VERSION from package.json, not latest (which Kubernetes pulls on every start)', () => {
    expect(defaultImage('my-operator', '0.1.0')).toBe('my-operator:0.1.0');
    expect(defaultImage('my-operator', '1.0.0-rc.1')).toBe('my-operator:1.0.0-rc.1');
    // No version, or one a tag cannot carry (build metadata's +): latest, as before.
    expect(defaultImage('my-operator', undefined)).toBe('my-operator:latest');
    expect(defaultImage('my-operator', '1.0.0+build.5')).toBe('my-operator:latest');
    expect(defaultImage('my-operator', 7)).toBe('my-operator:latest');
  });
});
