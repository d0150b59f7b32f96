import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeProtobufObject, encodeProtobufObject, ProtoReader } from '../protobuf/index.ts';
import { type ApiServer, createApiServer } from './api-server.ts';
import { type KubectlResult, runKubectl } from './kubectl-support.ts';
import { startTestServer, type TestServer } from './test-support.ts';

let dir: string;
let server: ApiServer;
let kubeconfig: string;

function kubectl(...args: string[]): Promise<KubectlResult> {
  return runKubectl('kubectl', kubeconfig, join(dir, 'cache'), args);
}

async function ok(...args: string[]): Promise<KubectlResult> {
  const result = await kubectl(...args);
  expect(result.code, `kubectl ${args.join(' ')}\n${result.stderr}`).toBe(0);
  return result;
}

async function getJson(...args: string[]): Promise<Record<string, unknown>> {
  return JSON.parse((await ok('get', ...args, '-o', 'json')).stdout) as Record<string, unknown>;
}

const manifest = (spec: string): string => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: typo
spec:
${spec}
  selector:
    matchLabels: { app: typo }
  template:
    metadata:
      labels: { app: typo }
    spec:
      containers:
        - name: web
          image: nginx
`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'converge-builtin-'));
  kubeconfig = join(dir, 'kubeconfig');
  server = createApiServer({ kubeconfigPath: kubeconfig });
  await server.listen();
});

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('real kubectl against built-in kinds from the 1.32 definitions', () => {
  it('kubectl create deployment (a protobuf body) stores what kube-apiserver stores', async () => {
    expect((await ok('create', 'deployment', 'web', '--image=nginx')).stdout).toBe(
      'deployment.apps/web created\n',
    );
    const web = await getJson('deployment', 'web');
    const spec = web.spec as Record<string, unknown>;
    expect(spec.replicas).toBe(1);
    // Go's protobuf encoder writes every non-pointer zero; kube-apiserver's JSON omits them
    expect(spec).not.toHaveProperty('paused');
    expect(spec).not.toHaveProperty('minReadySeconds');
    const template = spec.template as { spec: { containers: Record<string, unknown>[] } };
    expect(template.spec.containers[0]).toMatchObject({ name: 'nginx', image: 'nginx', resources: {} });
    expect(template.spec.containers[0]).not.toHaveProperty('workingDir');
    await ok('create', 'deployment', 'zero', '--image=nginx', '--replicas=0');
    expect(((await getJson('deployment', 'zero')).spec as Record<string, unknown>).replicas).toBe(0);
  });

  it('kubectl create service clusterip and kubectl create job', async () => {
    expect((await ok('create', 'service', 'clusterip', 'svc', '--tcp=80:8080')).stdout).toBe(
      'service/svc created\n',
    );
    const svc = await getJson('service', 'svc');
    expect((svc.spec as { ports: unknown[] }).ports).toEqual([
      { name: '80-8080', port: 80, protocol: 'TCP', targetPort: 8080 },
    ]);
    expect((await ok('create', 'job', 'once', '--image=busybox')).stdout).toBe('job.batch/once created\n');
    const job = await getJson('job', 'once');
    expect(
      (job.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]
        ?.image,
    ).toBe('busybox');
  });

  it.each([
    [['cronjob', 'cj', '--image=busybox', '--schedule=*/1 * * * *'], 'cronjob.batch/cj created'],
    [['ingress', 'ing', '--rule=foo.com/bar=svc:80'], 'ingress.networking.k8s.io/ing created'],
    [
      ['poddisruptionbudget', 'pdb', '--selector=app=x', '--min-available=1'],
      'poddisruptionbudget.policy/pdb created',
    ],
    [['priorityclass', 'pc', '--value=1000'], 'priorityclass.scheduling.k8s.io/pc created'],
    [['quota', 'q', '--hard=cpu=1,pods=2'], 'resourcequota/q created'],
    [['role', 'r', '--verb=get', '--resource=pods'], 'role.rbac.authorization.k8s.io/r created'],
    [
      ['clusterrole', 'cr', '--verb=get', '--resource=pods'],
      'clusterrole.rbac.authorization.k8s.io/cr created',
    ],
    [['rolebinding', 'rb', '--role=r', '--user=u'], 'rolebinding.rbac.authorization.k8s.io/rb created'],
    [['serviceaccount', 'sa'], 'serviceaccount/sa created'],
    [['secret', 'generic', 's', '--from-literal=a=b'], 'secret/s created'],
    [['service', 'nodeport', 'np', '--tcp=80:8080'], 'service/np created'],
  ])('kubectl create %j (a protobuf body) is created', async (args, out) => {
    expect((await ok('create', ...args)).stdout).toBe(`${out}\n`);
  });

  it('the protobuf-created objects read back as kube-apiserver stores them', async () => {
    expect((await getJson('poddisruptionbudget', 'pdb')).spec).toEqual({
      minAvailable: 1,
      selector: { matchLabels: { app: 'x' } },
    });
    expect((await getJson('resourcequota', 'q')).spec).toEqual({ hard: { cpu: '1', pods: '2' } });
    expect((await getJson('cronjob', 'cj')).spec).toMatchObject({ schedule: '*/1 * * * *', suspend: false });
  });

  it('kubectl explain shows the fields of built-in kinds (descriptions empty)', async () => {
    const template = (await ok('explain', 'deployment.spec.template')).stdout;
    expect(template).toContain('FIELD: template <PodTemplateSpec>');
    expect(template).toMatch(/metadata\t<ObjectMeta>/);
    expect(template).toMatch(/spec\t<PodSpec>/);
    const replicas = (await ok('explain', 'deployment.spec.replicas')).stdout;
    expect(replicas).toContain('FIELD: replicas <integer>');
    const pod = (await ok('explain', 'pod.spec.containers.resources')).stdout;
    expect(pod).toContain('FIELD: resources <ResourceRequirements>');
    expect(pod).toMatch(/limits\t<map\[string\]/);
    expect(pod).toMatch(/claims\t<\[\]ResourceClaim>/);
  });

  it('kubectl apply of a typo: Strict is a 400 in kube-apiserver’s words, Warn warns and drops, Ignore drops', async () => {
    const file = join(dir, 'typo.yaml');
    writeFileSync(file, manifest('  replicass: 2'));
    const strict = await kubectl('apply', '-f', file);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain(
      'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.replicass"',
    );
    const warn = await ok('apply', '-f', file, '--validate=warn');
    expect(warn.stderr).toBe('Warning: unknown field "spec.replicass"\n');
    expect(await getJson('deployment', 'typo')).not.toHaveProperty('spec.replicass');
    writeFileSync(file, manifest('  replicas: 2\n  strategy: { type: Recreate, rollingUpdatee: {} }'));
    const ignore = await ok('apply', '-f', file, '--validate=false');
    expect(ignore.stderr).toBe('');
    expect((await getJson('deployment', 'typo')).spec).toMatchObject({
      replicas: 2,
      strategy: { type: 'Recreate' },
    });
  });

  it('client-side apply of an existing Deployment prints no warning (the patch is computed from /openapi/v3)', async () => {
    const file = join(dir, 'apply.yaml');
    writeFileSync(file, manifest('  replicas: 3').replaceAll('typo', 'applied'));
    await ok('apply', '-f', file);
    writeFileSync(file, manifest('  replicas: 4').replaceAll('typo', 'applied'));
    const second = await ok('apply', '-f', file);
    expect(second.stderr).toBe('');
    expect(second.stdout).toBe('deployment.apps/applied configured\n');
    expect(((await getJson('deployment', 'applied')).spec as { replicas: number }).replicas).toBe(4);
  });

  it('kubectl apply of a kind: List validates against /openapi/v2 in protobuf, as with kube-apiserver', async () => {
    const file = join(dir, 'list.yaml');
    const list = (field: string): string => `apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: ConfigMap
    metadata: { name: listed }
    data: { x: "1" }
  - apiVersion: apps/v1
    kind: Deployment
    metadata: { name: listed }
    spec:
      ${field}: 2
      selector: { matchLabels: { a: b } }
      template:
        metadata: { labels: { a: b } }
        spec: { containers: [{ name: c, image: nginx }] }
`;
    writeFileSync(file, list('replicass'));
    const typo = await kubectl('apply', '-f', file);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain(
      'ValidationError(Deployment.spec): unknown field "replicass" in io.k8s.api.apps.v1.DeploymentSpec',
    );
    writeFileSync(file, list('replicas'));
    expect((await ok('apply', '-f', file)).stdout).toBe(
      'configmap/listed created\ndeployment.apps/listed created\n',
    );
  });

  it('a nested type error is a 400 naming the Go field', async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, manifest('  replicas: "two"').replaceAll('typo', 'bad'));
    const bad = await kubectl('apply', '-f', file, '--validate=false');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(
      'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32',
    );
  });
});

describe('protobuf responses, as client-go asks for them', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  const fetchRaw = async (path: string, init: RequestInit = {}): Promise<Response> =>
    fetch(new URL(path, t.url), {
      ...init,
      headers: {
        ...(init.headers as Record<string, string>),
        authorization: `Bearer ${t.server.token ?? ''}`,
      },
    });

  it('answers GET, LIST and WATCH with Accept: application/vnd.kubernetes.protobuf alone (not 406)', async () => {
    const body = encodeProtobufObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'pb', namespace: 'default' },
      data: { a: '1' },
    });
    const created = await fetchRaw('/api/v1/namespaces/default/configmaps', {
      method: 'POST',
      headers: { 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/json' },
      body: Buffer.from(body),
    });
    expect(created.status).toBe(201);
    const accept = { accept: 'application/vnd.kubernetes.protobuf' };
    const get = await fetchRaw('/api/v1/namespaces/default/configmaps/pb', { headers: accept });
    expect(get.status).toBe(200);
    expect(get.headers.get('content-type')).toBe('application/vnd.kubernetes.protobuf');
    const object = decodeProtobufObject(new Uint8Array(await get.arrayBuffer())).object;
    expect(object).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'pb' }, data: { a: '1' } });
    const list = await fetchRaw('/api/v1/namespaces/default/configmaps', { headers: accept });
    const decoded = decodeProtobufObject(new Uint8Array(await list.arrayBuffer())).object;
    expect(decoded.kind).toBe('ConfigMapList');
    expect((decoded as unknown as { items: { data: unknown }[] }).items.map((i) => i.data)).toEqual([
      { a: '1' },
    ]);

    const watch = await fetchRaw('/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0', {
      headers: { accept: 'application/vnd.kubernetes.protobuf;stream=watch' },
    });
    expect(watch.headers.get('content-type')).toBe('application/vnd.kubernetes.protobuf;stream=watch');
    const reader = (watch.body as ReadableStream<Uint8Array>).getReader();
    let bytes = new Uint8Array();
    while (bytes.length < 4 || bytes.length < 4 + new DataView(bytes.buffer).getUint32(0)) {
      const { value, done } = await reader.read();
      if (done) break;
      bytes = new Uint8Array([...bytes, ...value]);
    }
    await reader.cancel();
    const frame = bytes.subarray(4, 4 + new DataView(bytes.buffer).getUint32(0));
    expect([...frame.subarray(0, 4)]).toEqual([0x6b, 0x38, 0x73, 0x00]);
    // runtime.Unknown { typeMeta = 1, raw = 2 } → WatchEvent { type = 1, object = 2 { raw = 1 } }
    const fields = (bytes: Uint8Array): Map<number, Uint8Array> => {
      const out = new Map<number, Uint8Array>();
      const r = new ProtoReader(bytes);
      while (!r.done) {
        const tag = r.tag('test');
        out.set(tag.field, r.bytes(tag, 'test'));
      }
      return out;
    };
    const unknown = fields(frame.subarray(4));
    expect(new TextDecoder().decode(unknown.get(1))).toContain('WatchEvent');
    const event = fields(unknown.get(2) as Uint8Array);
    expect(new TextDecoder().decode(event.get(1))).toBe('ADDED');
    const raw = fields(event.get(2) as Uint8Array).get(1) as Uint8Array;
    expect(decodeProtobufObject(raw).object).toMatchObject({ kind: 'ConfigMap', data: { a: '1' } });
  });

  it('prefers protobuf when client-go lists it before JSON (kubectl describe)', async () => {
    const r = await fetchRaw('/api/v1/namespaces/default/configmaps', {
      headers: { accept: 'application/vnd.kubernetes.protobuf, application/json' },
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/vnd.kubernetes.protobuf');
  });
});
