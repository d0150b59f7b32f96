/**
 * The objects the HTTP benchmarks serve: a small custom resource (`Widget`, ~0.6 KB of JSON) and a
 * realistic Pod (~4.5 KB with managedFields, status and several containers).
 */
import type { KubeObject } from '@converge/runtime';

export const GROUP = 'bench.converge.dev';
export const VERSION = 'v1';
export const KIND = 'Widget';
export const PLURAL = 'widgets';

/** A Widget of ~0.6 KB of JSON once the store adds uid, resourceVersion and creationTimestamp. */
export function widget(i: number): KubeObject {
  const team = `team-${(i % 100).toString().padStart(2, '0')}`;
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: KIND,
    metadata: {
      name: `widget-${i.toString().padStart(6, '0')}`,
      namespace: team,
      labels: {
        'app.kubernetes.io/name': 'widget',
        'app.kubernetes.io/part-of': team,
        shard: String(i % 16),
      },
      annotations: { 'bench.converge.dev/note': 'cold-sync benchmark object' },
    },
    spec: {
      replicas: 1 + (i % 5),
      image: `registry.example.com/widgets/widget:v1.${i % 50}.0`,
      owner: `${team}@example.com`,
      ports: [
        { name: 'http', port: 8080, protocol: 'TCP' },
        { name: 'metrics', port: 9090, protocol: 'TCP' },
      ],
      settings: { mode: i % 2 === 0 ? 'active' : 'standby', weight: i % 100, tier: 'bronze' },
    },
  } as unknown as KubeObject;
}

export function podNamespace(i: number): string {
  return `team-${(i % 100).toString().padStart(2, '0')}`;
}

/** The app (and ReplicaSet) a Pod belongs to: 200 of them. */
export function podApp(i: number): string {
  return `app-${(i % 200).toString().padStart(3, '0')}`;
}

/** The ReplicaSet that owns the Pods of `app` (the server's garbage collector deletes a Pod whose owner does not exist). */
export function replicaSet(i: number): KubeObject {
  const app = podApp(i);
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: app, namespace: podNamespace(i), labels: { app } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app } },
      template: {
        metadata: { labels: { app } },
        spec: { containers: [{ name: 'app', image: `registry.example.com/${app}:v2` }] },
      },
    },
  } as unknown as KubeObject;
}

const CONTAINER_FIELDS = {
  'f:image': {},
  'f:imagePullPolicy': {},
  'f:name': {},
  'f:ports': {
    '.': {},
    'k:{"containerPort":8080,"protocol":"TCP"}': {
      '.': {},
      'f:containerPort': {},
      'f:name': {},
      'f:protocol': {},
    },
  },
  'f:resources': {
    '.': {},
    'f:limits': { '.': {}, 'f:cpu': {}, 'f:memory': {} },
    'f:requests': { '.': {}, 'f:cpu': {}, 'f:memory': {} },
  },
  'f:terminationMessagePath': {},
  'f:terminationMessagePolicy': {},
  'f:volumeMounts': {
    '.': {},
    'k:{"mountPath":"/etc/config"}': { '.': {}, 'f:mountPath': {}, 'f:name': {} },
  },
};

/**
 * A Pod as a ReplicaSet creates it and the kubelet reports it: ~4.5 KB of JSON with
 * managedFields (kube-controller-manager's spec, the kubelet's status), two containers, volumes,
 * tolerations, conditions and container statuses. Its owner must exist in the same namespace.
 */
export function pod(
  i: number,
  ownerUid: (app: string) => string = () => '6f1c2d3e-0000-4a5b-8c9d-0e1f2a3b4c5d',
): KubeObject {
  const app = podApp(i);
  const namespace = podNamespace(i);
  const hash = (0x5f3759df ^ (i * 2654435761)) >>> 0;
  const name = `${app}-${hash.toString(36).slice(0, 9)}-${(i % 100000).toString(36).padStart(5, 'x')}`;
  const time = '2026-11-20T10:15:30Z';
  const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  const container = (cname: string, image: string, port: number) => ({
    name: cname,
    image,
    imagePullPolicy: 'IfNotPresent',
    ports: [{ name: 'http', containerPort: port, protocol: 'TCP' }],
    resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '128Mi' } },
    volumeMounts: [{ name: 'config', mountPath: '/etc/config' }],
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
  });
  const status = (cname: string, image: string) => ({
    name: cname,
    image,
    imageID: `registry.example.com/${cname}@sha256:${hash.toString(16).padStart(8, '0').repeat(8)}`,
    containerID: `containerd://${hash.toString(16).padStart(8, '0').repeat(8)}`,
    ready: true,
    restartCount: i % 3,
    started: true,
    state: { running: { startedAt: time } },
  });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      generateName: `${app}-${hash.toString(36).slice(0, 9)}-`,
      labels: {
        app,
        'pod-template-hash': hash.toString(36).slice(0, 9),
        tier: i % 2 === 0 ? 'web' : 'worker',
      },
      annotations: { 'kubectl.kubernetes.io/restartedAt': time, 'prometheus.io/scrape': 'true' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: app,
          uid: ownerUid(app),
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      managedFields: [
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'v1',
          time,
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': {
              'f:generateName': {},
              'f:labels': { '.': {}, 'f:app': {}, 'f:pod-template-hash': {}, 'f:tier': {} },
              'f:ownerReferences': { '.': {}, 'k:{"uid":"6f1c2d3e"}': {} },
            },
            'f:spec': {
              'f:containers': {
                'k:{"name":"app"}': CONTAINER_FIELDS,
                'k:{"name":"proxy"}': CONTAINER_FIELDS,
              },
              'f:dnsPolicy': {},
              'f:restartPolicy': {},
              'f:schedulerName': {},
              'f:terminationGracePeriodSeconds': {},
              'f:volumes': { '.': {}, 'k:{"name":"config"}': { '.': {}, 'f:configMap': {}, 'f:name': {} } },
            },
          },
        },
        {
          manager: 'kubelet',
          operation: 'Update',
          apiVersion: 'v1',
          time,
          fieldsType: 'FieldsV1',
          subresource: 'status',
          fieldsV1: {
            'f:status': {
              'f:conditions': {
                'k:{"type":"Ready"}': { '.': {}, 'f:lastTransitionTime': {}, 'f:status': {}, 'f:type': {} },
              },
              'f:containerStatuses': {},
              'f:hostIP': {},
              'f:phase': {},
              'f:podIP': {},
              'f:startTime': {},
            },
          },
        },
      ],
    },
    spec: {
      containers: [
        container('app', `registry.example.com/${app}:v2.${i % 40}.1`, 8080),
        container('proxy', 'registry.example.com/proxy/envoy:1.31.2', 15001),
      ],
      volumes: [{ name: 'config', configMap: { name: `${app}-config`, defaultMode: 420 } }],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      nodeName: `node-${(i % 50).toString().padStart(2, '0')}`,
      schedulerName: 'default-scheduler',
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
    },
    status: {
      phase: 'Running',
      conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
        type,
        status: 'True',
        lastProbeTime: null,
        lastTransitionTime: time,
      })),
      hostIP: `192.168.${i % 50}.10`,
      hostIPs: [{ ip: `192.168.${i % 50}.10` }],
      podIP: ip,
      podIPs: [{ ip }],
      startTime: time,
      containerStatuses: [
        status('app', `registry.example.com/${app}:v2.${i % 40}.1`),
        status('proxy', 'registry.example.com/proxy/envoy:1.31.2'),
      ],
      qosClass: 'Burstable',
    },
  } as unknown as KubeObject;
}
