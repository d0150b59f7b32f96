// kubectl's own commands that packages/apiserver's *.kubectl.test.ts files do not already drive:
// the remaining `create` generators, client-side diff, events, raw health, discovery listings,
// wait, rollout status, label/annotate and edit. Each asserts what kube-apiserver 1.32 answers.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateWebhookCertificates } from '@converge/kube';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CompatServer, type ProcessResult, run, startCompatServer } from './compat-test-support.ts';

let compat: CompatServer;

beforeAll(async () => {
  compat = await startCompatServer('kubectl');
});
afterAll(async () => {
  await compat.close();
});

function kubectl(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<ProcessResult> {
  return run(
    'kubectl',
    [
      '--kubeconfig',
      compat.kubeconfig,
      '--cache-dir',
      join(compat.dir, 'cache'),
      '--request-timeout=30s',
      ...args,
    ],
    { env: { ...process.env, KUBECONFIG: compat.kubeconfig, ...env }, timeoutMs: 90_000 },
  );
}

async function ok(args: readonly string[], env?: NodeJS.ProcessEnv): Promise<string> {
  const result = await kubectl(args, env);
  expect(result.code, `kubectl ${args.join(' ')}\n${result.stderr}`).toBe(0);
  return result.stdout;
}

async function json<T>(args: readonly string[]): Promise<T> {
  return JSON.parse(await ok([...args, '-o', 'json'])) as T;
}

describe('kubectl commands beyond the basics', () => {
  it('kubectl: create secret — generic, tls and docker-registry store the types and keys kubectl generates', async () => {
    const certs = await generateWebhookCertificates({ hosts: ['example.com'] });
    writeFileSync(join(compat.dir, 'tls.crt'), certs.cert);
    writeFileSync(join(compat.dir, 'tls.key'), certs.key);
    expect(await ok(['create', 'secret', 'generic', 'plain', '--from-literal=user=admin'])).toBe(
      'secret/plain created\n',
    );
    await ok([
      'create',
      'secret',
      'tls',
      'cert',
      `--cert=${join(compat.dir, 'tls.crt')}`,
      `--key=${join(compat.dir, 'tls.key')}`,
    ]);
    await ok([
      'create',
      'secret',
      'docker-registry',
      'pull',
      '--docker-server=r.example.com',
      '--docker-username=u',
      '--docker-password=p',
    ]);
    const secrets = await json<{
      items: { metadata: { name: string }; type: string; data: Record<string, string> }[];
    }>(['get', 'secrets']);
    const summary = Object.fromEntries(
      secrets.items.map((s) => [s.metadata.name, [s.type, Object.keys(s.data).sort()]]),
    );
    expect(summary).toEqual({
      plain: ['Opaque', ['user']],
      cert: ['kubernetes.io/tls', ['tls.crt', 'tls.key']],
      pull: ['kubernetes.io/dockerconfigjson', ['.dockerconfigjson']],
    });
    expect(
      Buffer.from(
        secrets.items.find((s) => s.metadata.name === 'plain')?.data.user ?? '',
        'base64',
      ).toString(),
    ).toBe('admin');
  });

  it('kubectl: create service — nodeport, loadbalancer and externalname get the defaults kube-apiserver assigns', async () => {
    await ok(['create', 'service', 'nodeport', 'np', '--tcp=80:8080']);
    await ok(['create', 'service', 'loadbalancer', 'lb', '--tcp=443:8443']);
    await ok(['create', 'service', 'externalname', 'ext', '--external-name=db.example.com']);
    type Service = {
      spec: { type: string; clusterIP?: string; ports?: { nodePort?: number }[]; externalName?: string };
    };
    const np = await json<Service>(['get', 'service', 'np']);
    expect(np.spec.type).toBe('NodePort');
    expect(np.spec.ports?.[0]?.nodePort).toBeGreaterThanOrEqual(30000);
    expect(np.spec.ports?.[0]?.nodePort).toBeLessThanOrEqual(32767);
    expect(np.spec.clusterIP).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    const lb = await json<Service>(['get', 'service', 'lb']);
    expect([lb.spec.type, typeof lb.spec.ports?.[0]?.nodePort]).toEqual(['LoadBalancer', 'number']);
    const ext = await json<Service>(['get', 'service', 'ext']);
    expect([ext.spec.type, ext.spec.externalName, ext.spec.clusterIP]).toEqual([
      'ExternalName',
      'db.example.com',
      undefined,
    ]);
  });

  it('kubectl: create quota — a ResourceQuota with hard limits', async () => {
    expect(await ok(['create', 'quota', 'small', '--hard=pods=10,requests.cpu=2'])).toBe(
      'resourcequota/small created\n',
    );
    const quota = await json<{ spec: { hard: Record<string, string> } }>(['get', 'resourcequota', 'small']);
    expect(quota.spec.hard).toEqual({ pods: '10', 'requests.cpu': '2' });
  });

  it('kubectl: diff — client-side diff of an unchanged applied object prints nothing and exits 0', async () => {
    const manifest = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: same\ndata:\n  a: "1"\n';
    writeFileSync(join(compat.dir, 'same.yaml'), manifest);
    await ok(['apply', '-f', join(compat.dir, 'same.yaml')]);
    const diff = await kubectl(['diff', '-f', join(compat.dir, 'same.yaml')]);
    expect([diff.code, diff.stdout, diff.stderr]).toEqual([0, '', '']);
  });

  it('kubectl: events — kubectl events lists a core Event the way kube-apiserver serves it', async () => {
    const event = `apiVersion: v1
kind: Event
metadata:
  name: settings.1
involvedObject:
  apiVersion: v1
  kind: ConfigMap
  namespace: default
  name: settings
reason: Synced
message: all good
type: Normal
firstTimestamp: "2026-11-26T10:00:00Z"
lastTimestamp: "2026-11-26T10:00:00Z"
count: 1
source:
  component: operator
`;
    writeFileSync(join(compat.dir, 'event.yaml'), event);
    await ok(['create', '-f', join(compat.dir, 'event.yaml')]);
    // --for selects by involvedObject.kind, .apiVersion and .name, as kube-apiserver's field selectors do
    const out = await ok(['events', '--for', 'configmap/settings']);
    expect(out.split('\n')[0]).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
    expect(out).toMatch(/Normal\s+Synced\s+ConfigMap\/settings\s+all good/);
    const none = await kubectl(['events', '--for', 'configmap/other']);
    expect([none.code, none.stdout, none.stderr]).toEqual([0, '', 'No events found in default namespace.\n']);
  });

  it('kubectl: get --raw /readyz?verbose — lists checks and passes', async () => {
    const out = await ok(['get', '--raw', '/readyz?verbose']);
    expect(out.trimEnd().split('\n').at(-1)).toBe('readyz check passed');
    expect(out).toMatch(/^\[\+\]ping ok$/m);
  });

  it('kubectl: api-versions — lists the groups kube-apiserver 1.32 serves by default', async () => {
    const versions = (await ok(['api-versions'])).trim().split('\n');
    for (const gv of [
      'v1',
      'apps/v1',
      'batch/v1',
      'autoscaling/v2',
      'networking.k8s.io/v1',
      'policy/v1',
      'rbac.authorization.k8s.io/v1',
      'storage.k8s.io/v1',
      'coordination.k8s.io/v1',
      'discovery.k8s.io/v1',
      'events.k8s.io/v1',
      'scheduling.k8s.io/v1',
      'certificates.k8s.io/v1',
      'apiextensions.k8s.io/v1',
    ]) {
      expect(versions).toContain(gv);
    }
    expect([...versions].sort()).toEqual(versions);
  });

  it('kubectl: api-resources — names, short names, kinds and namespacing match kube-apiserver', async () => {
    const out = await ok(['api-resources', '--api-group=apps', '-o', 'wide']);
    expect(out).toMatch(
      /^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment\s+create,delete,deletecollection,get,list,patch,update,watch/m,
    );
    const core = await ok(['api-resources', '--api-group=', '--namespaced=false', '-o', 'name']);
    expect(core.trim().split('\n')).toEqual(
      expect.arrayContaining(['namespaces', 'nodes', 'persistentvolumes', 'componentstatuses']),
    );
  });

  it('kubectl: wait + rollout status — a Deployment whose status says Available and up to date', async () => {
    await ok(['create', 'deployment', 'rolled', '--image=nginx', '--replicas=2']);
    const deployment = await json<{ metadata: { generation: number } }>(['get', 'deployment', 'rolled']);
    const status = {
      status: {
        observedGeneration: deployment.metadata.generation,
        replicas: 2,
        updatedReplicas: 2,
        readyReplicas: 2,
        availableReplicas: 2,
        conditions: [
          { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'ok' },
          { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable', message: 'ok' },
        ],
      },
    };
    await ok([
      'patch',
      'deployment',
      'rolled',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify(status),
    ]);
    expect(await ok(['wait', '--for=condition=Available', 'deployment/rolled', '--timeout=60s'])).toBe(
      'deployment.apps/rolled condition met\n',
    );
    expect(await ok(['rollout', 'status', 'deployment/rolled', '--timeout=60s'])).toBe(
      'deployment "rolled" successfully rolled out\n',
    );
  });

  it('kubectl: label and annotate — add, overwrite refused without --overwrite, remove', async () => {
    await ok(['create', 'configmap', 'tagged']);
    expect(await ok(['label', 'configmap', 'tagged', 'tier=web'])).toBe('configmap/tagged labeled\n');
    const again = await kubectl(['label', 'configmap', 'tagged', 'tier=db']);
    expect([again.code, again.stderr]).toEqual([
      1,
      "error: 'tier' already has a value (web), and --overwrite is false\n",
    ]);
    await ok(['label', 'configmap', 'tagged', 'tier=db', '--overwrite']);
    expect(await ok(['annotate', 'configmap', 'tagged', 'owner=team-a'])).toBe(
      'configmap/tagged annotated\n',
    );
    await ok(['label', 'configmap', 'tagged', 'tier-']);
    const cm = await json<{
      metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
    }>(['get', 'configmap', 'tagged']);
    expect([cm.metadata.labels, cm.metadata.annotations]).toEqual([undefined, { owner: 'team-a' }]);
  });

  it('kubectl: edit — with an editor that changes nothing, "Edit cancelled, no changes made."', async () => {
    await ok(['create', 'configmap', 'edited', '--from-literal=a=1']);
    const edit = await kubectl(['edit', 'configmap', 'edited'], { EDITOR: 'true', KUBE_EDITOR: 'true' });
    expect([edit.code, edit.stdout, edit.stderr]).toEqual([0, '', 'Edit cancelled, no changes made.\n']);
  });

  it('kubectl: expose, scale, autoscale, set image — the objects kubectl derives from a Deployment', async () => {
    await ok(['create', 'deployment', 'derived', '--image=nginx:1.27', '--port=80']);
    expect(await ok(['expose', 'deployment', 'derived', '--port=80'])).toBe('service/derived exposed\n');
    expect(await ok(['scale', 'deployment', 'derived', '--replicas=3'])).toBe(
      'deployment.apps/derived scaled\n',
    );
    expect(await ok(['autoscale', 'deployment', 'derived', '--max=5', '--cpu-percent=80'])).toBe(
      'horizontalpodautoscaler.autoscaling/derived autoscaled\n',
    );
    expect(await ok(['set', 'image', 'deployment/derived', 'nginx=nginx:1.28'])).toBe(
      'deployment.apps/derived image updated\n',
    );
    const service = await json<{
      spec: { selector: Record<string, string>; ports: { port: number; targetPort: number }[] };
    }>(['get', 'service', 'derived']);
    expect([service.spec.selector, service.spec.ports[0]?.port, service.spec.ports[0]?.targetPort]).toEqual([
      { app: 'derived' },
      80,
      80,
    ]);
    // kubectl autoscale writes autoscaling/v2; kube-apiserver stores the v1 CPU target as a Resource metric
    const hpa = await json<{ spec: Record<string, unknown> }>(['get', 'hpa', 'derived']);
    expect(hpa.spec).toEqual({
      maxReplicas: 5,
      minReplicas: 1,
      metrics: [
        {
          type: 'Resource',
          resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } },
        },
      ],
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'derived' },
    });
    const deployment = await json<{
      spec: { replicas: number; template: { spec: { containers: { image: string }[] } } };
      metadata: { generation: number };
    }>(['get', 'deployment', 'derived']);
    expect([
      deployment.spec.replicas,
      deployment.spec.template.spec.containers[0]?.image,
      deployment.metadata.generation,
    ]).toEqual([3, 'nginx:1.28', 3]);
  });

  it('kubectl: explain — a core kind lists its fields from /openapi/v3', async () => {
    const out = await ok(['explain', 'configmap']);
    expect(out).toMatch(/^KIND:\s+ConfigMap$/m);
    expect(out).toMatch(/^VERSION:\s+v1$/m);
    expect(out).toMatch(/^ {2}immutable\s+<boolean>$/m);
    expect(out).toMatch(/^ {2}data\s+<map\[string\]string>$/m);
  });
});
