import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POD_UPDATE_FORBIDDEN } from './pod-update.ts';
import { startTestServer, type TestResponse, type TestServer } from './test-support.ts';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

type Json = Record<string, unknown>;

const PODS = '/api/v1/namespaces/default/pods';
const MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
const post = (path: string, body: unknown): Promise<TestResponse> =>
  t.request(path, { method: 'POST', body });
const put = (path: string, body: unknown): Promise<TestResponse> => t.request(path, { method: 'PUT', body });

async function createPod(name: string, spec: Json = {}, metadata: Json = {}): Promise<Json> {
  const r = await post(PODS, {
    metadata: { name, ...metadata },
    spec: { containers: [{ name: 'app', image: 'nginx:1.27' }], ...spec },
  });
  expect(r.status, r.text).toBe(201);
  return r.json as Json;
}

const specOf = (pod: Json): Json => pod.spec as Json;
const containersOf = (pod: Json, key = 'containers'): Json[] => (specOf(pod)[key] ?? []) as Json[];

describe('Pod defaults from kube-apiserver’s default admission plugins', () => {
  it('ServiceAccount: serviceAccountName defaults to default and every container mounts a kube-api-access projected volume', async () => {
    const pod = await createPod('sa', {
      initContainers: [{ name: 'init', image: 'busybox:1.36' }],
    });
    const spec = specOf(pod);
    expect(spec.serviceAccountName).toBe('default');
    const volumes = spec.volumes as Json[];
    expect(volumes).toHaveLength(1);
    const name = String(volumes[0]?.name);
    expect(name).toMatch(/^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(volumes[0]).toEqual({
      name,
      projected: {
        defaultMode: 420,
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          {
            downwardAPI: {
              items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
            },
          },
        ],
      },
    });
    for (const container of [...containersOf(pod, 'initContainers'), ...containersOf(pod)]) {
      expect(container.volumeMounts).toEqual([{ name, readOnly: true, mountPath: MOUNT_PATH }]);
    }
  });

  it('ServiceAccount: no token volume when the pod, or else its ServiceAccount, sets automountServiceAccountToken false; the account’s imagePullSecrets are copied', async () => {
    const optedOut = specOf(await createPod('no-token', { automountServiceAccountToken: false }));
    expect(optedOut.volumes).toBeUndefined();
    expect((optedOut.containers as Json[])[0]?.volumeMounts).toBeUndefined();

    const sa = await post('/api/v1/namespaces/default/serviceaccounts', {
      metadata: { name: 'quiet' },
      automountServiceAccountToken: false,
      imagePullSecrets: [{ name: 'registry' }],
    });
    expect(sa.status, sa.text).toBe(201);
    const quiet = specOf(await createPod('quiet-sa', { serviceAccountName: 'quiet' }));
    expect(quiet.volumes).toBeUndefined();
    // the ServiceAccount's imagePullSecrets are copied into a pod that has none
    expect(quiet.imagePullSecrets).toEqual([{ name: 'registry' }]);
    const overridden = specOf(
      await createPod('quiet-sa-override', {
        serviceAccountName: 'quiet',
        automountServiceAccountToken: true,
      }),
    );
    expect(overridden.volumes).toHaveLength(1);
  });

  it('ServiceAccount: a container already mounting the credentials path is left alone', async () => {
    const pod = await createPod('own-mount', {
      containers: [
        { name: 'own', image: 'nginx:1.27', volumeMounts: [{ name: 'mine', mountPath: MOUNT_PATH }] },
        { name: 'other', image: 'nginx:1.27' },
      ],
      volumes: [{ name: 'mine', emptyDir: {} }],
    });
    const [own, other] = containersOf(pod);
    expect(own?.volumeMounts).toEqual([{ name: 'mine', mountPath: MOUNT_PATH }]);
    expect(((other?.volumeMounts ?? []) as Json[])[0]?.name).toMatch(/^kube-api-access-/);
    expect((specOf(pod).volumes as Json[]).map((v) => v.name)).toEqual([
      'mine',
      expect.stringMatching(/^kube-api-access-/),
    ]);
  });

  it('DefaultTolerationSeconds: tolerates not-ready and unreachable nodes for 300 s unless already tolerated', async () => {
    const plain = specOf(await createPod('tol'));
    expect(plain.tolerations).toEqual([
      {
        key: 'node.kubernetes.io/not-ready',
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: 300,
      },
      {
        key: 'node.kubernetes.io/unreachable',
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: 300,
      },
    ]);
    const own = {
      key: 'node.kubernetes.io/not-ready',
      operator: 'Exists',
      effect: 'NoExecute',
      tolerationSeconds: 60,
    };
    expect(specOf(await createPod('tol-own', { tolerations: [own] })).tolerations).toEqual([
      own,
      {
        key: 'node.kubernetes.io/unreachable',
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: 300,
      },
    ]);
    const everything = { operator: 'Exists' };
    expect(specOf(await createPod('tol-all', { tolerations: [everything] })).tolerations).toEqual([
      everything,
    ]);
  });

  it('Priority: priority 0 and preemptionPolicy PreemptLowerPriority without a class; enableServiceLinks true by defaulting', async () => {
    const spec = specOf(await createPod('prio'));
    expect(spec.priority).toBe(0);
    expect(spec.preemptionPolicy).toBe('PreemptLowerPriority');
    expect(spec.enableServiceLinks).toBe(true);
    expect(specOf(await createPod('links-off', { enableServiceLinks: false })).enableServiceLinks).toBe(
      false,
    );
  });

  it('Priority: takes the value of priorityClassName, refuses an unknown class or a different priority with 403', async () => {
    const pc = await post('/apis/scheduling.k8s.io/v1/priorityclasses', {
      metadata: { name: 'high' },
      value: 1000,
      preemptionPolicy: 'Never',
    });
    expect(pc.status, pc.text).toBe(201);
    const spec = specOf(await createPod('high-prio', { priorityClassName: 'high' }));
    expect(spec.priority).toBe(1000);
    expect(spec.preemptionPolicy).toBe('Never');

    // kube-apiserver always has the two system classes
    expect(
      specOf(await createPod('critical', { priorityClassName: 'system-cluster-critical' })).priority,
    ).toBe(2_000_000_000);

    const unknown = await post(PODS, {
      metadata: { name: 'nope' },
      spec: { priorityClassName: 'missing', containers: [{ name: 'c', image: 'nginx' }] },
    });
    expect(unknown.status).toBe(403);
    expect((unknown.json as Json).message).toBe(
      'pods "nope" is forbidden: no PriorityClass with name missing was found',
    );
    const mismatch = await post(PODS, {
      metadata: { name: 'nope' },
      spec: { priority: 5, containers: [{ name: 'c', image: 'nginx' }] },
    });
    expect(mismatch.status).toBe(403);
    expect((mismatch.json as Json).message).toBe(
      'pods "nope" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name',
    );
  });

  it('leaves pod templates alone: a Deployment’s template gets no enableServiceLinks, volumes or tolerations', async () => {
    const r = await post('/apis/apps/v1/namespaces/default/deployments', {
      metadata: { name: 'web' },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'c', image: 'nginx' }] },
        },
      },
    });
    expect(r.status, r.text).toBe(201);
    const template = ((r.json as Json).spec as Json).template as Json;
    expect(specOf(template).enableServiceLinks).toBeUndefined();
    expect(specOf(template).volumes).toBeUndefined();
    expect(specOf(template).tolerations).toBeUndefined();
  });
});

describe('Pod updates, as kube-apiserver’s ValidatePodUpdate', () => {
  const invalid = (r: TestResponse): { message: string; causes: Json[] } => {
    expect(r.status, r.text).toBe(422);
    const status = r.json as Json;
    return { message: String(status.message), causes: (status.details as Json).causes as Json[] };
  };

  it('may change container images and add tolerations', async () => {
    const pod = await createPod('upd-ok');
    const spec = specOf(pod);
    const next = {
      ...pod,
      spec: {
        ...spec,
        containers: [{ ...containersOf(pod)[0], image: 'nginx:1.28' }],
        tolerations: [...(spec.tolerations as Json[]), { key: 'gpu', operator: 'Exists' }],
        activeDeadlineSeconds: 600,
      },
    };
    const r = await put(`${PODS}/upd-ok`, next);
    expect(r.status, r.text).toBe(200);
    expect(containersOf(r.json as Json)[0]?.image).toBe('nginx:1.28');
  });

  it('keeps priority and the default tolerations when a PUT leaves them out', async () => {
    const pod = await createPod('upd-keep');
    const { priority: _p, tolerations: _t, ...rest } = specOf(pod);
    const r = await put(`${PODS}/upd-keep`, { ...pod, spec: rest });
    expect(r.status, r.text).toBe(200);
    expect(specOf(r.json as Json).priority).toBe(0);
    expect(specOf(r.json as Json).tolerations).toEqual(specOf(pod).tolerations);
  });

  it('refuses an added container at spec.containers', async () => {
    const pod = await createPod('upd-add');
    const r = invalid(
      await put(`${PODS}/upd-add`, {
        ...pod,
        spec: { ...specOf(pod), containers: [...containersOf(pod), { name: 'second', image: 'busybox' }] },
      }),
    );
    expect(r.message).toBe(
      'Pod "upd-add" is invalid: spec.containers: Forbidden: pod updates may not add or remove containers',
    );
  });

  // kube-apiserver follows the leading text with a go-cmp diff of the specs; Converge's diff is its
  // own, so the test matches the field path and the leading text only.
  it('refuses any other spec change with Forbidden at spec listing the updatable fields', async () => {
    const pod = await createPod('upd-other');
    const r = invalid(
      await put(`${PODS}/upd-other`, { ...pod, spec: { ...specOf(pod), restartPolicy: 'Never' } }),
    );
    expect(r.causes).toHaveLength(1);
    expect(r.causes[0]?.field).toBe('spec');
    expect(r.causes[0]?.reason).toBe('FieldValueForbidden');
    expect(String(r.causes[0]?.message)).toMatch(/^Forbidden: pod updates may not change fields other than /);
    expect(String(r.causes[0]?.message).startsWith(`Forbidden: ${POD_UPDATE_FORBIDDEN}\n`)).toBe(true);
    expect(POD_UPDATE_FORBIDDEN).toBe(
      'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
    );
    expect(r.message.startsWith(`Pod "upd-other" is invalid: spec: Forbidden: ${POD_UPDATE_FORBIDDEN}`)).toBe(
      true,
    );
    expect(String(r.causes[0]?.message)).toContain('restartPolicy');
  });

  // DefaultTolerationSeconds runs on update too: dropping its two tolerations puts them back
  it('refuses a removed toleration, a raised activeDeadlineSeconds and a new scheduling gate', async () => {
    const pod = await createPod('upd-rules', {
      activeDeadlineSeconds: 100,
      schedulingGates: [{ name: 'a' }],
      tolerations: [{ key: 'gpu', operator: 'Exists' }],
    });
    const spec = specOf(pod);
    const dropped = invalid(await put(`${PODS}/upd-rules`, { ...pod, spec: { ...spec, tolerations: [] } }));
    expect(dropped.message).toBe(
      'Pod "upd-rules" is invalid: spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds',
    );
    const raised = invalid(
      await put(`${PODS}/upd-rules`, { ...pod, spec: { ...spec, activeDeadlineSeconds: 200 } }),
    );
    expect(raised.message).toBe(
      'Pod "upd-rules" is invalid: spec.activeDeadlineSeconds: Invalid value: 200: must be less than or equal to previous value',
    );
    const gated = invalid(
      await put(`${PODS}/upd-rules`, {
        ...pod,
        spec: { ...spec, schedulingGates: [{ name: 'a' }, { name: 'b' }] },
      }),
    );
    expect(gated.message).toBe(
      'Pod "upd-rules" is invalid: spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate \'b\'',
    );
    const ungated = await put(`${PODS}/upd-rules`, { ...pod, spec: { ...spec, schedulingGates: [] } });
    expect(ungated.status, ungated.text).toBe(200);
  });
});
