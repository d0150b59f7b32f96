/**
 * Website: a `Website` (domain, replicas, content) becomes a ConfigMap holding the page, a
 * Deployment serving it and a Service in front, all owned by the Website. Status carries the URL,
 * the Deployment's available replicas and a Ready condition with observedGeneration. A finalizer's
 * cleanup removes the children itself and records an Event before the Website goes. Every step
 * records an Event.
 */
import {
  type Client,
  type Condition,
  createEventRecorder,
  createOrUpdate,
  done,
  type EventRecorder,
  finalizer,
  isNotFound,
  type KubeObject,
  type Manager,
  type ObjectKey,
  type ResourceType,
  setControllerReference,
  setStatusCondition,
} from '@converge/runtime';

const type = (
  group: string,
  version: string,
  kind: string,
  plural: string,
  extra: Partial<ResourceType> = {},
) => ({ group, version, kind, plural, namespaced: true, ...extra }) satisfies ResourceType;
export const websiteType = type('examples.converge.dev', 'v1alpha1', 'Website', 'websites', {
  statusSubresource: true,
  requireResourceVersionOnUpdate: true,
});
export const configMapType = type('', 'v1', 'ConfigMap', 'configmaps', { generation: false });
export const serviceType = type('', 'v1', 'Service', 'services', { statusSubresource: true });
export const deploymentType = type('apps', 'v1', 'Deployment', 'deployments', { statusSubresource: true });
export const FINALIZER = 'websites.examples.converge.dev/cleanup';

export interface Website extends KubeObject {
  readonly spec: {
    readonly domain: string;
    readonly replicas?: number;
    readonly content: string;
    readonly image?: string;
  };
  readonly status?: {
    readonly url?: string;
    readonly availableReplicas?: number;
    readonly observedGeneration?: number;
    readonly conditions?: readonly Condition[];
  };
}
type Child = KubeObject & Record<string, unknown>;

function children(site: Website): [ResourceType, Child][] {
  const { name = '', namespace = '' } = site.metadata;
  const labels = { 'app.kubernetes.io/name': 'website', 'app.kubernetes.io/instance': name };
  const meta = { name, namespace, labels };
  const page = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { ...meta, name: `${name}-content` },
    data: { 'index.html': site.spec.content },
  };
  const pod = {
    metadata: { labels },
    spec: {
      containers: [
        {
          name: 'web',
          image: site.spec.image ?? 'nginx:1.27',
          ports: [{ containerPort: 80 }],
          volumeMounts: [{ name: 'content', mountPath: '/usr/share/nginx/html' }],
        },
      ],
      volumes: [{ name: 'content', configMap: { name: `${name}-content` } }],
    },
  };
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: meta,
    spec: { replicas: site.spec.replicas ?? 1, selector: { matchLabels: labels }, template: pod },
  };
  const service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta,
    spec: { selector: labels, ports: [{ port: 80, targetPort: 80 }] },
  };
  return [
    [configMapType, page],
    [deploymentType, deployment],
    [serviceType, service],
  ];
}

async function apply(client: Client, events: EventRecorder, site: Website): Promise<number> {
  let available = 0;
  for (const [childType, desired] of children(site)) {
    const { result, object } = await createOrUpdate(
      client,
      childType,
      {
        ...desired,
        metadata: { name: desired.metadata.name, namespace: desired.metadata.namespace },
      } as Child,
      (current) =>
        setControllerReference(site, {
          ...current,
          ...desired,
          metadata: { ...current.metadata, labels: desired.metadata.labels },
        } as Child),
    );
    if (result !== 'unchanged')
      events.event(
        site,
        'Normal',
        `${childType.kind}${result === 'created' ? 'Created' : 'Updated'}`,
        'Reconcile',
        `${childType.kind} ${object.metadata.name} ${result}`,
      );
    if (childType === deploymentType)
      available = Number(
        (object as { status?: { availableReplicas?: number } }).status?.availableReplicas ?? 0,
      );
  }
  return available;
}

async function cleanup(client: Client, events: EventRecorder, site: Website): Promise<void> {
  for (const [childType, child] of children(site).reverse()) {
    try {
      await client.delete(childType, {
        namespace: child.metadata.namespace ?? '',
        name: child.metadata.name ?? '',
      });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
  events.event(site, 'Normal', 'CleanedUp', 'Finalize', 'deleted the ConfigMap, Deployment and Service');
}

export async function reconcileWebsite(
  client: Client,
  events: EventRecorder,
  key: ObjectKey,
  now: () => number,
) {
  let site: Website;
  try {
    site = await client.get<Website>(websiteType, key);
  } catch (error) {
    if (isNotFound(error)) return done();
    throw error;
  }
  return finalizer(client, websiteType, FINALIZER, site, async (event) => {
    if (event.type === 'cleanup') return cleanup(client, events, event.object);
    const current = event.object;
    const availableReplicas = await apply(client, events, current);
    const generation = current.metadata.generation;
    const conditions = setStatusCondition(
      current.status?.conditions,
      {
        type: 'Ready',
        status: 'True',
        reason: 'ChildrenReady',
        message: 'ConfigMap, Deployment and Service match the spec',
        ...(generation === undefined ? {} : { observedGeneration: generation }),
      },
      now(),
    );
    const status = {
      url: `http://${current.spec.domain}`,
      availableReplicas,
      observedGeneration: generation,
      conditions,
    };
    if (JSON.stringify(status) !== JSON.stringify(current.status)) {
      await client.updateStatus(websiteType, { ...current, status });
      events.event(current, 'Normal', 'Ready', 'Reconcile', `serving http://${current.spec.domain}`);
    }
    return done();
  });
}

/** The operator module. */
export default function website(manager: Manager): void {
  const events = createEventRecorder({
    backend: manager.backend,
    component: 'website-controller',
    clock: manager.clock,
  });
  manager.add(events, { name: 'website-events' });
  manager
    .controller(websiteType)
    .owns(configMapType)
    .owns(deploymentType)
    .owns(serviceType)
    .named('website')
    .complete((key) => reconcileWebsite(manager.client, events, key, () => manager.clock.now()));
}
