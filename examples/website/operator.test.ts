import { WebhookServer } from '@converge/kube';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Cluster,
  eventually,
  type KubeJson,
  type KubeListJson,
  manifest,
  startCluster,
} from '../test-support.ts';
import { websiteConverter } from './conversion.ts';
import website, { FINALIZER } from './operator.ts';

type WebsiteJson = KubeJson & {
  readonly spec: { readonly replicas: number };
  readonly status?: {
    readonly url?: string;
    readonly observedGeneration?: number;
    readonly conditions?: readonly { readonly type: string; readonly status: string }[];
  };
};
type DeploymentJson = KubeJson & { readonly spec: { readonly replicas: number } };
type ConfigMapJson = KubeJson & { readonly data: Readonly<Record<string, string>> };
type EventJson = KubeJson & {
  readonly reason: string;
  readonly regarding?: { readonly kind?: string; readonly name?: string };
};

const children = [
  ['configmap', 'hello-content'],
  ['deployment', 'hello'],
  ['service', 'hello'],
] as const;

let cluster: Cluster;
const kubectl = (...args: string[]) => cluster.kubectl(args);
const stopWebhooks = new AbortController();
let webhooks: Promise<void> | undefined;

/**
 * kubectl reads `website` as v1beta1 (the group's preferred version), stored as v1alpha1: the
 * conversion webhook must answer. This test serves it itself, as `converge dev` would.
 */
async function serveConversion(): Promise<void> {
  const server = new WebhookServer({
    host: '127.0.0.1',
    port: 0,
    tls: { generate: { hosts: ['127.0.0.1'] } },
  });
  server.conversion('/convert', websiteConverter);
  webhooks = server.start(stopWebhooks.signal);
  const { url } = await server.listening();
  const caBundle = Buffer.from(server.caBundle ?? '').toString('base64');
  const patch = [
    {
      op: 'replace',
      path: '/spec/conversion/webhook/clientConfig',
      value: { url: `${url}/convert`, caBundle },
    },
  ];
  await kubectl('patch', 'crd', 'websites.examples.converge.dev', '--type=json', '-p', JSON.stringify(patch));
}

beforeAll(async () => {
  cluster = await startCluster({
    operator: website,
    crds: [manifest(import.meta.url, 'manifests/crd.yaml')],
  });
  await serveConversion();
});
afterAll(async () => {
  await cluster?.close();
  stopWebhooks.abort();
  await webhooks;
});

/** The reasons of the events.k8s.io Events about Website `name`. */
async function eventReasons(name: string): Promise<string[]> {
  const events = await cluster.getJson<KubeListJson<EventJson>>(['events.v1.events.k8s.io', '-n', 'default']);
  return events.items
    .filter((e) => e.regarding?.kind === 'Website' && e.regarding.name === name)
    .map((e) => e.reason);
}

describe('Website operator over HTTP, driven by kubectl', () => {
  it('applied with kubectl, a Website gets an owned ConfigMap, Deployment and Service and reports Ready', async () => {
    await kubectl('apply', '-f', manifest(import.meta.url, 'manifests/sample.yaml'));
    await kubectl('wait', '--for=condition=Ready', '--timeout=60s', 'website/hello');

    const site = await cluster.getJson<WebsiteJson>(['website', 'hello']);
    expect(site.metadata.finalizers).toEqual([FINALIZER]);
    expect(site.status?.url).toBe('http://hello.example.com');
    expect(site.status?.observedGeneration).toBe(site.metadata.generation);
    for (const [kind, name] of children) {
      const child = await cluster.getJson([kind, name]);
      expect(child.metadata.ownerReferences, `${kind}/${name}`).toEqual([
        expect.objectContaining({
          apiVersion: 'examples.converge.dev/v1alpha1',
          kind: 'Website',
          name: 'hello',
          uid: site.metadata.uid,
          controller: true,
        }),
      ]);
    }
    expect((await cluster.getJson<DeploymentJson>(['deployment', 'hello'])).spec.replicas).toBe(2);
    await eventually('the Created and Ready Events', async () => {
      const reasons = await eventReasons('hello');
      return ['ConfigMapCreated', 'DeploymentCreated', 'ServiceCreated', 'Ready'].every((r) =>
        reasons.includes(r),
      );
    });
  });

  it('kubectl get websites prints v1beta1’s columns (URL, hostnames, replicas, readiness), converted by the webhook', async () => {
    const table = await kubectl('get', 'websites');
    const [header, row, ...rest] = table.trim().split('\n');
    expect(header?.split(/\s+/)).toEqual(['NAME', 'URL', 'HOSTNAMES', 'REPLICAS', 'READY', 'AGE']);
    expect(row?.split(/\s+/).slice(0, 5)).toEqual([
      'hello',
      'http://hello.example.com',
      '["hello.example.com"]',
      '2',
      'True',
    ]);
    expect(rest).toEqual([]);
  });

  it('a spec edit with kubectl patch reaches the children and observedGeneration catches up', async () => {
    const before = await cluster.getJson<WebsiteJson>(['website', 'hello']);
    await kubectl(
      'patch',
      'website',
      'hello',
      '--type=merge',
      '-p',
      '{"spec":{"replicas":3,"content":"<h1>v2</h1>"}}',
    );
    const generation = String((before.metadata.generation ?? 0) + 1);
    await kubectl(
      'wait',
      `--for=jsonpath={.status.observedGeneration}=${generation}`,
      '--timeout=60s',
      'website/hello',
    );
    const site = await cluster.getJson<WebsiteJson>(['website', 'hello']);
    expect(site.metadata.generation).toBe(Number(generation));
    expect(site.status?.url).toBe('http://hello.example.com');
    expect(site.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect((await cluster.getJson<DeploymentJson>(['deployment', 'hello'])).spec.replicas).toBe(3);
    const content = await cluster.getJson<ConfigMapJson>(['configmap', 'hello-content']);
    expect(content.data['index.html']).toBe('<h1>v2</h1>');
    const row = (await kubectl('get', 'website', 'hello', '--no-headers')).trim().split(/\s+/);
    expect(row.slice(0, 5)).toEqual([
      'hello',
      'http://hello.example.com',
      '["hello.example.com"]',
      '3',
      'True',
    ]);
  });

  it('a child deleted with kubectl is recreated, owned by the same Website, and the children the server defaulted are not rewritten', async () => {
    const site = await cluster.getJson<WebsiteJson>(['website', 'hello']);
    const old = await cluster.getJson(['service', 'hello']);
    const deployment = await cluster.getJson(['deployment', 'hello']);
    // A 0 ms delay rule is a counter of the writes it matches.
    const writes = cluster.server.faults.delay({
      pathPattern: '/apis/apps/v1/namespaces/default/deployments/hello',
      methods: ['PUT', 'PATCH'],
      ms: 0,
    });
    await kubectl('delete', 'service', 'hello', '--wait');
    await eventually('the Service to be recreated', async () => {
      const list = await cluster.getJson<KubeListJson>([
        'services',
        '--field-selector',
        'metadata.name=hello',
      ]);
      return list.items.length === 1 && list.items[0]?.metadata.uid !== old.metadata.uid;
    });
    const service = await cluster.getJson(['service', 'hello']);
    expect(service.metadata.ownerReferences?.[0]?.uid).toBe(site.metadata.uid);
    // The reconcile that recreated the Service applied the Deployment first: with the server's
    // defaults in it (strategy, imagePullPolicy, …), it already had every field the operator sets.
    const after = await cluster.getJson(['deployment', 'hello']);
    expect(after.metadata.resourceVersion).toBe(deployment.metadata.resourceVersion);
    // …and so sent no write for it at all.
    expect(cluster.server.faults.list().find((rule) => rule.id === writes.id)?.injected).toBe(0);
    writes.remove();
  });

  it('kubectl delete runs the finalizer cleanup, then the Website and its children are gone', async () => {
    await kubectl('delete', 'website', 'hello', '--wait', '--timeout=60s');
    await eventually('the CleanedUp Event', async () => (await eventReasons('hello')).includes('CleanedUp'));
    const left = await kubectl(
      'get',
      'websites,deployments,services,configmaps',
      '-l',
      'app.kubernetes.io/instance=hello',
      '-o',
      'name',
    );
    expect(left.trim()).toBe('');
    expect(await kubectl('get', 'websites', '-o', 'name')).toBe('');
  });
});
