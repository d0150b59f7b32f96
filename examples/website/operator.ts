/**
 * Website: a `Website` (domain, replicas, content) becomes a ConfigMap holding the page, a
 * Deployment serving it and a Service in front, all owned by the Website. Status carries the URL,
 * the Deployment's available replicas and a Ready condition with observedGeneration. A finalizer's
 * cleanup deletes the children itself and records an Event before the Website goes. Every step
 * records an Event.
 *
 * Its webhooks (`admission.ts`, `conversion.ts`): a defaulter (replicas 1, the image), a validator
 * (a malformed domain is refused), and the conversion between the stored `v1alpha1` and `v1beta1`
 * (a list of hostnames). The CRD (`manifests/crd.yaml`) makes the domain immutable with a CEL
 * transition rule.
 */
import {
  apiVersionOf,
  type Client,
  type Clock,
  configMapType,
  createEventRecorder,
  createOrUpdate,
  deepDerivative,
  deepEqual,
  deploymentType,
  done,
  type EventRecorder,
  finalizer,
  ignoreNotFound,
  type Manager,
  type ObjectKey,
  type ResourceType,
  serviceType,
  setControllerReference,
  setStatusCondition,
} from '@converge/runtime';
import { DEFAULT_IMAGE, DEFAULT_REPLICAS, defaultWebsite, validateWebsite } from './admission.ts';
import { websiteConverter } from './conversion.ts';
import { type Website, websiteType } from './types.ts';

export { type Website, type WebsiteV1beta1, websiteType, websiteV1beta1Type } from './types.ts';
export const FINALIZER = 'websites.examples.converge.dev/cleanup';

const READY = {
  type: 'Ready',
  status: 'True',
  reason: 'ChildrenReady',
  message: 'ConfigMap, Deployment and Service match the spec',
} as const;

const labels = (name: string) => ({
  'app.kubernetes.io/name': 'website',
  'app.kubernetes.io/instance': name,
});

/** The children of a Website: their type, name and the fields this operator owns. */
function children(site: Website): [ResourceType, string, Record<string, unknown>][] {
  const name = site.metadata.name ?? '';
  const podLabels = labels(name);
  const web = {
    name: 'web',
    image: site.spec.image ?? DEFAULT_IMAGE,
    ports: [{ containerPort: 80 }],
    volumeMounts: [{ name: 'content', mountPath: '/usr/share/nginx/html' }],
  };
  const volumes = [{ name: 'content', configMap: { name: `${name}-content` } }];
  const deployment = {
    replicas: site.spec.replicas ?? DEFAULT_REPLICAS,
    selector: { matchLabels: podLabels },
    template: { metadata: { labels: podLabels }, spec: { containers: [web], volumes } },
  };
  return [
    [configMapType, `${name}-content`, { data: { 'index.html': site.spec.content } }],
    [deploymentType, name, { spec: deployment }],
    [serviceType, name, { spec: { selector: podLabels, ports: [{ port: 80, targetPort: 80 }] } }],
  ];
}

/** Creates each child, or updates it to our fields, owned by the Website (labels are set on creation). */
async function apply(client: Client, events: EventRecorder, site: Website): Promise<void> {
  const { name: owner = '', namespace = '' } = site.metadata;
  for (const [childType, name, fields] of children(site)) {
    const metadata = { name, namespace, labels: labels(owner) };
    const skeleton = { apiVersion: apiVersionOf(childType), kind: childType.kind, metadata };
    // The server fills in defaults (a Service's clusterIP): write only when our fields differ.
    const { result, object } = await createOrUpdate(client, childType, skeleton, (current) =>
      setControllerReference(site, deepDerivative(fields, current) ? current : { ...current, ...fields }),
    );
    if (result !== 'unchanged') {
      const reason = `${childType.kind}${result === 'created' ? 'Created' : 'Updated'}`;
      events.event(site, 'Normal', reason, 'Reconcile', `${childType.kind} ${name} ${result}`, object);
    }
  }
}

/** The finalizer's cleanup: deletes the children at once (not later, by garbage collection) and says so. */
async function cleanup(client: Client, events: EventRecorder, site: Website): Promise<void> {
  for (const [childType, name] of children(site).reverse()) {
    await client.delete(childType, { namespace: site.metadata.namespace ?? '', name }).catch(ignoreNotFound);
  }
  events.event(site, 'Normal', 'CleanedUp', 'Finalize', 'deleted the ConfigMap, Deployment and Service');
}

export async function reconcileWebsite(client: Client, events: EventRecorder, clock: Clock, key: ObjectKey) {
  const site = await client.get<Website>(websiteType, key).catch(ignoreNotFound);
  if (site === undefined) return done(); // gone, after its cleanup
  return finalizer(client, websiteType, FINALIZER, site, async (event) => {
    if (event.type === 'cleanup') return cleanup(client, events, event.object);
    const current = event.object;
    await apply(client, events, current);
    const deployment = await client.get(deploymentType, key);
    const availableReplicas = deployment.status?.availableReplicas ?? 0;
    const url = `http://${current.spec.domain}`;
    const observedGeneration = current.metadata.generation ?? 0;
    const ready = { ...READY, observedGeneration };
    const conditions = setStatusCondition(current.status?.conditions, ready, clock.now());
    const status = { url, availableReplicas, observedGeneration, conditions };
    if (!deepEqual(status, current.status)) {
      await client.updateStatus(websiteType, { ...current, status });
      events.event(current, 'Normal', 'Ready', 'Reconcile', `serving ${url}`);
    }
    return done();
  });
}

/** The operator module: `converge dev` and `converge run` call it with the manager. */
export default function website(manager: Manager): void {
  const { backend, client, clock } = manager;
  const events = createEventRecorder({ backend, clock, component: 'website-controller' });
  manager.add(events, { name: 'website-events' });
  manager
    .controller(websiteType)
    .owns(configMapType)
    .owns(deploymentType)
    .owns(serviceType)
    .named('website')
    .complete((key) => reconcileWebsite(client, events, clock, key));
  // Served by the manager's webhook server (`converge dev` gives it one and registers the webhook
  // configurations and the CRD's conversion webhook in the embedded API server).
  manager
    .webhook<Website>(websiteType)
    .withDefaulter(defaultWebsite)
    .withValidator(validateWebsite)
    .withConverter(websiteConverter)
    .complete();
}
