import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestResponse, type TestServer } from './test-support.ts';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ secure: true, clusterDefaults: true });
});
afterAll(async () => {
  await t.close();
});

type Json = Record<string, unknown>;

const post = (path: string, body: unknown): Promise<TestResponse> =>
  t.request(path, { method: 'POST', body });
const put = (path: string, body: unknown): Promise<TestResponse> => t.request(path, { method: 'PUT', body });
const message = (r: TestResponse): string => String((r.json as Json).message);

async function eventually<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('never happened');
}

const podTemplate = (labels: Json = { app: 'web' }) => ({
  metadata: { labels },
  spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] },
});

describe('what the apiserver and controller-manager create', () => {
  it('serves the kubernetes Service, Endpoints and EndpointSlice in default, pointing at this server', async () => {
    const port = Number(new URL(t.url).port);
    const svc = (await t.request('/api/v1/namespaces/default/services/kubernetes')).json as Json;
    expect(svc.spec).toMatchObject({
      clusterIP: '10.96.0.1',
      type: 'ClusterIP',
      ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: port }],
    });
    expect((svc.metadata as Json).labels).toEqual({ component: 'apiserver', provider: 'kubernetes' });
    const ep = (await t.request('/api/v1/namespaces/default/endpoints/kubernetes')).json as Json;
    expect(ep.subsets).toEqual([
      { addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port, protocol: 'TCP' }] },
    ]);
    const slice = (await t.request('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes'))
      .json as Json;
    expect(slice).toMatchObject({ addressType: 'IPv4', endpoints: [{ addresses: ['127.0.0.1'] }] });
  });

  it('gives existing and new namespaces a default ServiceAccount and kube-root-ca.crt, recreated when deleted', async () => {
    const cm = (
      await eventually(async () => {
        const r = await t.request('/api/v1/namespaces/kube-system/configmaps/kube-root-ca.crt');
        return r.status === 200 ? r : undefined;
      })
    ).json as Json;
    expect(String((cm.data as Json)['ca.crt'])).toContain('BEGIN CERTIFICATE');
    expect(t.server.ca).toBeDefined();
    expect((await post('/api/v1/namespaces', { metadata: { name: 'fresh' } })).status).toBe(201);
    const sa = await eventually(async () => {
      const r = await t.request('/api/v1/namespaces/fresh/serviceaccounts/default');
      return r.status === 200 ? r : undefined;
    });
    expect((sa.json as Json).kind).toBe('ServiceAccount');
    expect(
      (await t.request('/api/v1/namespaces/fresh/serviceaccounts/default', { method: 'DELETE' })).status,
    ).toBe(200);
    await eventually(async () => {
      const r = await t.request('/api/v1/namespaces/fresh/serviceaccounts/default');
      return r.status === 200 ? r : undefined;
    });
  });
});

describe('cluster defaults across restarts', () => {
  it('point the kubernetes Service and Endpoints at the port of the new process, once', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'converge-defaults-'));
    try {
      for (let run = 0; run < 2; run++) {
        const s = await startTestServer({ dataDir, clusterDefaults: true });
        const port = Number(new URL(s.url).port);
        const svc = (await s.request('/api/v1/namespaces/default/services/kubernetes')).json as Json;
        expect((svc.spec as { ports: Json[] }).ports[0]?.targetPort).toBe(port);
        const ep = (await s.request('/api/v1/namespaces/default/endpoints/kubernetes')).json as Json;
        expect(JSON.stringify(ep.subsets)).toContain(`"port":${port}`);
        const services = (await s.request('/api/v1/namespaces/default/services')).json as {
          items: unknown[];
        };
        expect(services.items).toHaveLength(1);
        await s.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('validation with kube-apiserver’s field errors', () => {
  const cases: [string, string, Json, string][] = [
    [
      'a Service port out of range',
      '/api/v1/namespaces/default/services',
      { metadata: { name: 'bad-port' }, spec: { ports: [{ port: 70000 }] } },
      // targetPort defaults to port, and is checked too
      'Service "bad-port" is invalid: [spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive, spec.ports[0].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive]',
    ],
    [
      'two unnamed Service ports',
      '/api/v1/namespaces/default/services',
      { metadata: { name: 'two' }, spec: { ports: [{ port: 80, name: 'http' }, { port: 81 }] } },
      'Service "two" is invalid: spec.ports[1].name: Required value',
    ],
    [
      'a Service cluster IP that is no IP',
      '/api/v1/namespaces/default/services',
      { metadata: { name: 'bad-ip' }, spec: { clusterIP: '10.96.0.300', ports: [{ port: 80 }] } },
      'Service "bad-ip" is invalid: spec.clusterIPs[0]: Invalid value: "10.96.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
    ],
    [
      'an Endpoints address that is no IP',
      '/api/v1/namespaces/default/endpoints',
      {
        metadata: { name: 'bad-ep' },
        subsets: [{ addresses: [{ ip: 'db.local' }], ports: [{ port: 5432 }] }],
      },
      'Endpoints "bad-ep" is invalid: subsets[0].addresses[0].ip: Invalid value: "db.local": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
    ],
    [
      'a Job without an allowed restartPolicy',
      '/apis/batch/v1/namespaces/default/jobs',
      { metadata: { name: 'j' }, spec: { template: podTemplate() } },
      'Job.batch "j" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
    ],
    [
      'a DaemonSet whose selector does not match',
      '/apis/apps/v1/namespaces/default/daemonsets',
      {
        metadata: { name: 'ds' },
        spec: { selector: { matchLabels: { app: 'x' } }, template: podTemplate() },
      },
      'DaemonSet.apps "ds" is invalid: spec.template.metadata.labels: Invalid value: "map[string]string{\\"app\\":\\"web\\"}": `selector` does not match template `labels`',
    ],
    [
      'a CronJob with a bad schedule',
      '/apis/batch/v1/namespaces/default/cronjobs',
      {
        metadata: { name: 'cj' },
        spec: {
          schedule: '* * *',
          jobTemplate: {
            spec: {
              template: {
                ...podTemplate(),
                spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] },
              },
            },
          },
        },
      },
      'CronJob.batch "cj" is invalid: spec.schedule: Invalid value: "* * *": expected exactly 5 fields, found 3: [* * *]',
    ],
    [
      'a RoleBinding to an unknown kind',
      '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings',
      { metadata: { name: 'rb' }, roleRef: { kind: 'Thing', name: 'x' } },
      'RoleBinding.rbac.authorization.k8s.io "rb" is invalid: roleRef.kind: Unsupported value: "Thing": supported values: "Role", "ClusterRole"',
    ],
    [
      'a Role rule without verbs',
      '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles',
      { metadata: { name: 'r' }, rules: [{ apiGroups: [''], resources: ['pods'] }] },
      'Role.rbac.authorization.k8s.io "r" is invalid: rules[0].verbs: Required value: verbs must contain at least one value',
    ],
    [
      'a PDB with both bounds',
      '/apis/policy/v1/namespaces/default/poddisruptionbudgets',
      { metadata: { name: 'pdb' }, spec: { minAvailable: 1, maxUnavailable: 1 } },
      'PodDisruptionBudget.policy "pdb" is invalid: spec: Invalid value: {"minAvailable":1,"maxUnavailable":1}: minAvailable and maxUnavailable cannot be both set',
    ],
    [
      'an Ingress path without a pathType',
      '/apis/networking.k8s.io/v1/namespaces/default/ingresses',
      {
        metadata: { name: 'ing' },
        spec: {
          rules: [
            { http: { paths: [{ path: '/', backend: { service: { name: 'web', port: { number: 80 } } } }] } },
          ],
        },
      },
      'Ingress.networking.k8s.io "ing" is invalid: spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified',
    ],
    [
      'a user PriorityClass above the limit',
      '/apis/scheduling.k8s.io/v1/priorityclasses',
      { metadata: { name: 'huge' }, value: 2_000_000_000 },
      'PriorityClass.scheduling.k8s.io "huge" is invalid: value: Forbidden: maximum allowed value of a user defined priority is 1000000000',
    ],
    [
      'an HPA with minReplicas above maxReplicas',
      '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers',
      {
        metadata: { name: 'h' },
        spec: {
          scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
          minReplicas: 5,
          maxReplicas: 2,
        },
      },
      'HorizontalPodAutoscaler.autoscaling "h" is invalid: spec.minReplicas: Invalid value: 5: must be less than or equal to maxReplicas',
    ],
    [
      'an EndpointSlice without addressType',
      '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices',
      { metadata: { name: 'es' }, endpoints: [] },
      'EndpointSlice.discovery.k8s.io "es" is invalid: addressType: Required value',
    ],
  ];
  it.each(cases)('rejects %s', async (_label, path, body, text) => {
    const r = await post(path, body);
    expect(r.status, r.text).toBe(422);
    expect(message(r)).toBe(text);
  });
});

describe('discovery', () => {
  it('lists the CSR approval subresource and the HPA in both autoscaling versions, v2 preferred', async () => {
    const certs = (await t.request('/apis/certificates.k8s.io/v1')).json as { resources: Json[] };
    expect(certs.resources.map((r) => r.name)).toEqual([
      'certificatesigningrequests',
      'certificatesigningrequests/approval',
      'certificatesigningrequests/status',
    ]);
    const group = (await t.request('/apis/autoscaling')).json as Json;
    expect(group.preferredVersion).toEqual({ groupVersion: 'autoscaling/v2', version: 'v2' });
    expect((group.versions as Json[]).map((v) => v.version)).toEqual(['v2', 'v1']);
  });
});

describe('RBAC names', () => {
  it('are path segments: colons allowed, % and / refused with upstream’s message', async () => {
    const path = '/apis/rbac.authorization.k8s.io/v1/clusterroles';
    expect((await post(path, { metadata: { name: 'example:colons-allowed' }, rules: [] })).status).toBe(201);
    const bad = await post(path, { metadata: { name: 'a%b' }, rules: [] });
    expect(message(bad)).toBe(
      'ClusterRole.rbac.authorization.k8s.io "a%b" is invalid: metadata.name: Invalid value: "a%b": may not contain \'%\'',
    );
  });
});

describe('ReplicationControllers', () => {
  it('default selector and labels from the template and serve a Scale with the selector', async () => {
    const path = '/api/v1/namespaces/default/replicationcontrollers';
    const rc = (
      await post(path, { metadata: { name: 'old' }, spec: { template: podTemplate({ app: 'old' }) } })
    ).json as Json;
    expect(rc.spec).toMatchObject({ replicas: 1, selector: { app: 'old' } });
    expect((rc.metadata as Json).labels).toEqual({ app: 'old' });
    const scale = (await t.request(`${path}/old/scale`)).json as Json;
    expect(scale).toMatchObject({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      spec: { replicas: 1 },
      status: { selector: 'app=old' },
    });
  });
});

describe('ClusterRoles', () => {
  const path = '/apis/rbac.authorization.k8s.io/v1/clusterroles';
  it('cluster-admin and its binding to system:masters exist from the start', async () => {
    const role = (await t.request(`${path}/cluster-admin`)).json as Json;
    expect(role.rules).toEqual([
      { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
      { nonResourceURLs: ['*'], verbs: ['*'] },
    ]);
    const binding = (await t.request('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/cluster-admin'))
      .json as Json;
    expect(binding.subjects).toEqual([
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:masters' },
    ]);
  });

  it('an aggregated ClusterRole gets the rules of the roles its selectors match, and follows them', async () => {
    const label = 'rbac.example.com/aggregate-to-monitoring';
    await post(path, {
      metadata: { name: 'monitoring' },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [label]: 'true' } }] },
    });
    const pods = { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] };
    const nodes = { apiGroups: [''], resources: ['nodes'], verbs: ['get'] };
    await post(path, { metadata: { name: 'mon-b', labels: { [label]: 'true' } }, rules: [pods, nodes] });
    await post(path, { metadata: { name: 'mon-a', labels: { [label]: 'true' } }, rules: [pods] });
    await post(path, {
      metadata: { name: 'unrelated' },
      rules: [{ apiGroups: ['apps'], resources: ['*'], verbs: ['*'] }],
    });
    const rules = async () => ((await t.request(`${path}/monitoring`)).json as Json).rules;
    await eventually(async () =>
      JSON.stringify(await rules()) === JSON.stringify([pods, nodes]) ? true : undefined,
    );
    expect((await t.request(`${path}/mon-b`, { method: 'DELETE' })).status).toBe(200);
    await eventually(async () =>
      JSON.stringify(await rules()) === JSON.stringify([pods]) ? true : undefined,
    );
  });
});

describe('defaults users see', () => {
  it('defaults Services, PVCs, DaemonSets, CronJobs and NetworkPolicies as kube-apiserver does', async () => {
    const svc = (
      await post('/api/v1/namespaces/default/services', {
        metadata: { name: 'web' },
        spec: { ports: [{ port: 80 }] },
      })
    ).json as Json;
    expect(svc.spec).toMatchObject({
      type: 'ClusterIP',
      sessionAffinity: 'None',
      ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }],
    });
    expect(String((svc.spec as Json).clusterIP)).toMatch(/^10\.\d+\.\d+\.\d+$/);
    const pvc = (
      await post('/api/v1/namespaces/default/persistentvolumeclaims', {
        metadata: { name: 'data' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      })
    ).json as Json;
    expect(pvc.spec).toMatchObject({ volumeMode: 'Filesystem' });
    expect(pvc.status).toEqual({ phase: 'Pending' });
    const ds = (
      await post('/apis/apps/v1/namespaces/default/daemonsets', {
        metadata: { name: 'agent' },
        spec: { selector: { matchLabels: { app: 'web' } }, template: podTemplate() },
      })
    ).json as Json;
    expect(ds.spec).toMatchObject({
      revisionHistoryLimit: 10,
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
    });
    const cj = (
      await post('/apis/batch/v1/namespaces/default/cronjobs', {
        metadata: { name: 'nightly' },
        spec: {
          schedule: '0 3 * * *',
          jobTemplate: {
            spec: {
              template: {
                spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'busybox' }] },
              },
            },
          },
        },
      })
    ).json as Json;
    expect(cj.spec).toMatchObject({
      concurrencyPolicy: 'Allow',
      suspend: false,
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 1,
    });
    const np = (
      await post('/apis/networking.k8s.io/v1/namespaces/default/networkpolicies', {
        metadata: { name: 'deny' },
        spec: { egress: [{ ports: [{ port: 53 }] }] },
      })
    ).json as Json;
    expect(np.spec).toMatchObject({
      podSelector: {},
      policyTypes: ['Ingress', 'Egress'],
      egress: [{ ports: [{ port: 53, protocol: 'TCP' }] }],
    });
  });

  it('serves HorizontalPodAutoscalers in autoscaling/v1 and v2, one object', async () => {
    const created = await post('/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers', {
      metadata: { name: 'web' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        maxReplicas: 5,
        targetCPUUtilizationPercentage: 60,
      },
    });
    expect(created.status, created.text).toBe(201);
    const v2 = (await t.request('/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/web'))
      .json as Json;
    expect(v2.spec).toMatchObject({
      minReplicas: 1,
      maxReplicas: 5,
      metrics: [
        {
          type: 'Resource',
          resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } },
        },
      ],
    });
    const v1 = (await t.request('/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/web'))
      .json as Json;
    expect(v1.spec).toEqual({
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      minReplicas: 1,
      maxReplicas: 5,
      targetCPUUtilizationPercentage: 60,
    });
  });
});

describe('immutable fields', () => {
  it('refuses a new Service cluster IP, Deployment selector, RoleBinding roleRef and a bound PVC spec', async () => {
    const svc = (
      await post('/api/v1/namespaces/default/services', {
        metadata: { name: 'fixed' },
        spec: { ports: [{ port: 80 }] },
      })
    ).json as Json;
    const moved = {
      ...svc,
      spec: { ...(svc.spec as Json), clusterIP: '10.96.7.7', clusterIPs: ['10.96.7.7'] },
    };
    const r1 = await put('/api/v1/namespaces/default/services/fixed', moved);
    expect(message(r1)).toBe(
      'Service "fixed" is invalid: spec.clusterIPs[0]: Invalid value: ["10.96.7.7"]: may not change once set',
    );

    const deploy = (
      await post('/apis/apps/v1/namespaces/default/deployments', {
        metadata: { name: 'web' },
        spec: {
          selector: { matchLabels: { app: 'web' } },
          template: podTemplate({ app: 'web', tier: 'fe' }),
        },
      })
    ).json as Json;
    const reselected = {
      ...deploy,
      spec: { ...(deploy.spec as Json), selector: { matchLabels: { app: 'web', tier: 'fe' } } },
    };
    const r2 = await put('/apis/apps/v1/namespaces/default/deployments/web', reselected);
    expect(message(r2)).toBe(
      'Deployment.apps "web" is invalid: spec.selector: Invalid value: {"matchLabels":{"app":"web","tier":"fe"}}: field is immutable',
    );

    const rb = (
      await post('/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', {
        metadata: { name: 'readers' },
        roleRef: { kind: 'ClusterRole', name: 'view' },
        subjects: [{ kind: 'User', name: 'jane' }],
      })
    ).json as Json;
    expect(rb.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' });
    expect(rb.subjects).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'jane' }]);
    const r3 = await put('/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings/readers', {
      ...rb,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
    });
    expect(message(r3)).toBe(
      'RoleBinding.rbac.authorization.k8s.io "readers" is invalid: roleRef: Invalid value: {"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"edit"}: cannot change roleRef',
    );

    const pvc = (
      await post('/api/v1/namespaces/default/persistentvolumeclaims', {
        metadata: { name: 'grow' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      })
    ).json as Json;
    const bound = (
      await put('/api/v1/namespaces/default/persistentvolumeclaims/grow/status', {
        ...pvc,
        status: { phase: 'Bound' },
      })
    ).json as Json;
    const bigger = {
      ...bound,
      spec: { ...(bound.spec as Json), resources: { requests: { storage: '2Gi' } } },
    };
    expect((await put('/api/v1/namespaces/default/persistentvolumeclaims/grow', bigger)).status).toBe(200);
    const current = (await t.request('/api/v1/namespaces/default/persistentvolumeclaims/grow')).json as Json;
    const r4 = await put('/api/v1/namespaces/default/persistentvolumeclaims/grow', {
      ...current,
      spec: { ...(current.spec as Json), accessModes: ['ReadWriteMany'] },
    });
    expect(message(r4)).toBe(
      'PersistentVolumeClaim "grow" is invalid: spec: Forbidden: spec is immutable after creation except resources.requests for bound claims',
    );
  });
});

describe('StatefulSet updates', () => {
  it('may change replicas and the template, nothing else', async () => {
    const path = '/apis/apps/v1/namespaces/default/statefulsets';
    const sts = (
      await post(path, {
        metadata: { name: 'db' },
        spec: {
          serviceName: 'db',
          selector: { matchLabels: { app: 'db' } },
          template: podTemplate({ app: 'db' }),
        },
      })
    ).json as Json;
    const spec = sts.spec as Json;
    const scaled = await put(`${path}/db`, { ...sts, spec: { ...spec, replicas: 3 } });
    expect(scaled.status, scaled.text).toBe(200);
    const renamed = await put(`${path}/db`, {
      ...(scaled.json as Json),
      spec: { ...spec, replicas: 3, serviceName: 'other' },
    });
    expect(message(renamed)).toBe(
      "StatefulSet.apps \"db\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    );
  });
});

describe('field selectors kube-apiserver supports', () => {
  it('selects nodes by spec.unschedulable (absent is false), services by spec.type, and refuses others', async () => {
    await post('/api/v1/nodes', { metadata: { name: 'n1' }, status: { capacity: { cpu: '4' } } });
    await post('/api/v1/nodes', { metadata: { name: 'n2' }, spec: { unschedulable: true } });
    const names = async (path: string) =>
      ((await t.request(path)).json as { items: { metadata: Json }[] }).items.map((i) => i.metadata.name);
    expect(await names('/api/v1/nodes?fieldSelector=spec.unschedulable%3Dfalse')).toEqual(['n1']);
    expect(await names('/api/v1/nodes?fieldSelector=spec.unschedulable%3Dtrue')).toEqual(['n2']);
    const node = (await t.request('/api/v1/nodes/n1')).json as Json;
    expect(node.status).toEqual({ capacity: { cpu: '4' } });
    await post('/api/v1/namespaces/default/services', {
      metadata: { name: 'ext' },
      spec: { type: 'ExternalName', externalName: 'example.com' },
    });
    expect(await names('/api/v1/namespaces/default/services?fieldSelector=spec.type%3DExternalName')).toEqual(
      ['ext'],
    );
    expect(
      await names('/api/v1/namespaces/default/services?fieldSelector=spec.clusterIP%3D10.96.0.1'),
    ).toEqual(['kubernetes']);
    const bad = await t.request('/apis/rbac.authorization.k8s.io/v1/clusterroles?fieldSelector=rules%3Dx');
    expect(bad.status).toBe(400);
  });
});

const NEW_KINDS: [string, Json][] = [
  ['/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles', { rules: [] }],
  ['/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { roleRef: {} }],
  ['/apis/networking.k8s.io/v1/namespaces/default/ingresses', { spec: {} }],
  ['/apis/networking.k8s.io/v1/namespaces/default/networkpolicies', { spec: {} }],
  ['/apis/policy/v1/namespaces/default/poddisruptionbudgets', { spec: {} }],
  ['/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers', { spec: {} }],
  ['/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers', { spec: {} }],
  ['/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', { addressType: 'IPv4' }],
  ['/apis/storage.k8s.io/v1/storageclasses', { provisioner: 'x' }],
  ['/apis/storage.k8s.io/v1/csidrivers', { spec: {} }],
  ['/apis/storage.k8s.io/v1/volumeattachments', { spec: {} }],
  ['/apis/scheduling.k8s.io/v1/priorityclasses', { value: 1 }],
  ['/apis/certificates.k8s.io/v1/certificatesigningrequests', { spec: {} }],
  ['/apis/node.k8s.io/v1/runtimeclasses', { handler: 'runc' }],
  ['/apis/batch/v1/namespaces/default/cronjobs', { spec: {} }],
  ['/apis/apps/v1/namespaces/default/daemonsets', { spec: {} }],
  ['/api/v1/nodes', { spec: {} }],
  ['/api/v1/namespaces/default/endpoints', { subsets: [] }],
  ['/api/v1/persistentvolumes', { spec: {} }],
  ['/api/v1/namespaces/default/persistentvolumeclaims', { spec: {} }],
  ['/api/v1/namespaces/default/resourcequotas', { spec: {} }],
  ['/api/v1/namespaces/default/limitranges', { spec: {} }],
  ['/api/v1/namespaces/default/podtemplates', { template: {} }],
  ['/api/v1/namespaces/default/replicationcontrollers', { spec: {} }],
];

describe('random objects of the new kinds', () => {
  it('get a 201 or a 4xx Status, never a 5xx', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...NEW_KINDS),
        fc.dictionary(
          fc.constantFrom(
            'spec',
            'rules',
            'roleRef',
            'subjects',
            'addressType',
            'endpoints',
            'ports',
            'value',
            'handler',
            'template',
            'subsets',
            'provisioner',
          ),
          fc.anything({ maxDepth: 3 }),
          { maxKeys: 3 },
        ),
        async ([path, base], extra) => {
          n += 1;
          const r = await post(path, { ...base, ...extra, metadata: { name: `fuzz-${n}` } });
          expect(r.status, r.text).toBeLessThan(500);
          if (r.status >= 400) expect((r.json as Json).kind).toBe('Status');
        },
      ),
      { numRuns: 150 },
    );
  });

  it('updates and patches with random fields get a 200 or a 4xx Status, never a 5xx', async () => {
    const valid: [string, Json][] = [
      ['/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles', { rules: [] }],
      ['/apis/policy/v1/namespaces/default/poddisruptionbudgets', { spec: { minAvailable: 1 } }],
      ['/apis/scheduling.k8s.io/v1/priorityclasses', { value: 10 }],
      ['/apis/storage.k8s.io/v1/storageclasses', { provisioner: 'x' }],
      ['/api/v1/nodes', { spec: {} }],
      ['/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', { addressType: 'IPv4', endpoints: [] }],
    ];
    const objects: [string, Json][] = [];
    for (const [path, body] of valid) {
      const created = await post(path, { ...body, metadata: { name: 'target' } });
      expect(created.status, created.text).toBe(201);
      objects.push([`${path}/target`, created.json as Json]);
    }
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...objects),
        fc.dictionary(
          fc.constantFrom(
            'spec',
            'rules',
            'value',
            'provisioner',
            'addressType',
            'endpoints',
            'status',
            'roleRef',
          ),
          fc.anything({ maxDepth: 3 }),
          { maxKeys: 2 },
        ),
        fc.boolean(),
        async ([path, current], extra, patch) => {
          const r = patch
            ? await t.request(path, {
                method: 'PATCH',
                body: extra,
                headers: { 'content-type': 'application/merge-patch+json' },
              })
            : await put(path, { ...current, ...extra, metadata: { name: 'target' } });
          expect(r.status, r.text).toBeLessThan(500);
        },
      ),
      { numRuns: 150 },
    );
  });
});
