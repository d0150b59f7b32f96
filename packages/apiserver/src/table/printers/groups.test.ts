import { describe, expect, it } from 'vitest';
import {
  controllerRevisionPrinter,
  cronJobPrinter,
  daemonSetPrinter,
  hpaPrinter,
  pdbPrinter,
} from './apps.ts';
import { builtinPrinter } from './index.ts';
import {
  csrPrinter,
  nodePrinter,
  persistentVolumeClaimPrinter,
  persistentVolumePrinter,
  resourceQuotaPrinter,
  roleBindingPrinter,
  storageClassPrinter,
} from './infra.ts';
import { endpointSlicePrinter, endpointsPrinter, ingressPrinter } from './network.ts';

const now = Date.UTC(2026, 0, 10, 12, 0, 0);
const meta = (name: string, extra: object = {}) => ({
  name,
  creationTimestamp: '2026-01-10T11:58:00Z',
  ...extra,
});
const names = (p: { columns: readonly { name: string }[] }) => p.columns.map((c) => c.name);

describe('Node', () => {
  it('prints NAME STATUS ROLES AGE VERSION and the wide columns', () => {
    expect(names(nodePrinter)).toEqual([
      'Name',
      'Status',
      'Roles',
      'Age',
      'Version',
      'Internal-IP',
      'External-IP',
      'OS-Image',
      'Kernel-Version',
      'Container-Runtime',
    ]);
    const node = {
      metadata: meta('w1', {
        labels: { 'node-role.kubernetes.io/worker': '', 'node-role.kubernetes.io/infra': '' },
      }),
      spec: { unschedulable: true },
      status: {
        conditions: [{ type: 'Ready', status: 'True' }],
        addresses: [{ type: 'InternalIP', address: '10.0.0.4' }],
        nodeInfo: { kubeletVersion: 'v1.32.4', osImage: 'Debian' },
      },
    };
    expect(nodePrinter.row(node, now).cells).toEqual([
      'w1',
      'Ready,SchedulingDisabled',
      'infra,worker',
      '2m',
      'v1.32.4',
      '10.0.0.4',
      '<none>',
      'Debian',
      '<unknown>',
      '<unknown>',
    ]);
    expect(nodePrinter.row({ metadata: meta('bare') }, now).cells.slice(0, 3)).toEqual([
      'bare',
      'Unknown',
      '<none>',
    ]);
  });
});

describe('Endpoints and EndpointSlices', () => {
  it('print the first three ip:port pairs and how many more', () => {
    const ep = {
      metadata: meta('web'),
      subsets: [
        {
          addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }],
          ports: [{ port: 80 }, { port: 443 }],
        },
      ],
    };
    expect(endpointsPrinter.row(ep, now).cells).toEqual([
      'web',
      '10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more...',
      '2m',
    ]);
    expect(endpointsPrinter.row({ metadata: meta('none') }, now).cells[1]).toBe('<none>');
    const slice = {
      metadata: meta('web-abc'),
      addressType: 'IPv4',
      ports: [{ port: 80 }],
      endpoints: [{ addresses: ['10.0.0.1'] }],
    };
    expect(endpointSlicePrinter.row(slice, now).cells).toEqual(['web-abc', 'IPv4', '80', '10.0.0.1', '2m']);
  });
});

describe('volumes', () => {
  it('print capacity, access modes, claim and Terminating for deleted objects', () => {
    const pv = {
      metadata: meta('pv1'),
      spec: {
        capacity: { storage: '5Gi' },
        accessModes: ['ReadWriteMany', 'ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        claimRef: { namespace: 'default', name: 'data' },
        storageClassName: 'fast',
        volumeMode: 'Filesystem',
      },
      status: { phase: 'Bound' },
    };
    expect(persistentVolumePrinter.row(pv, now).cells).toEqual([
      'pv1',
      '5Gi',
      'RWO,RWX',
      'Retain',
      'Bound',
      'default/data',
      'fast',
      '<unset>',
      '',
      '2m',
      'Filesystem',
    ]);
    const pvc = {
      metadata: meta('data', { deletionTimestamp: '2026-01-10T11:59:00Z' }),
      spec: { volumeName: 'pv1', volumeMode: 'Filesystem' },
      status: { phase: 'Bound', capacity: { storage: '5Gi' }, accessModes: ['ReadWriteOnce'] },
    };
    expect(persistentVolumeClaimPrinter.row(pvc, now).cells).toEqual([
      'data',
      'Terminating',
      'pv1',
      '5Gi',
      'RWO',
      '',
      '<unset>',
      '2m',
      'Filesystem',
    ]);
  });

  it('marks the default StorageClass', () => {
    const sc = {
      metadata: meta('standard', { annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }),
      provisioner: 'rancher.io/local-path',
      volumeBindingMode: 'WaitForFirstConsumer',
    };
    expect(storageClassPrinter.row(sc, now).cells).toEqual([
      'standard (default)',
      'rancher.io/local-path',
      'Delete',
      'WaitForFirstConsumer',
      false,
      '2m',
    ]);
  });
});

describe('workloads', () => {
  it('DaemonSet counts and node selector; CronJob schedule, suspend and last schedule', () => {
    const ds = {
      metadata: meta('agent'),
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: {
          spec: {
            nodeSelector: { 'kubernetes.io/os': 'linux' },
            containers: [{ name: 'a', image: 'busybox' }],
          },
        },
      },
      status: {
        desiredNumberScheduled: 3,
        currentNumberScheduled: 3,
        numberReady: 2,
        updatedNumberScheduled: 3,
        numberAvailable: 2,
      },
    };
    expect(daemonSetPrinter.row(ds, now).cells).toEqual([
      'agent',
      3,
      3,
      2,
      3,
      2,
      'kubernetes.io/os=linux',
      '2m',
      'a',
      'busybox',
      'app=agent',
    ]);
    const cj = {
      metadata: meta('nightly'),
      spec: {
        schedule: '0 3 * * *',
        suspend: false,
        jobTemplate: { spec: { template: { spec: { containers: [] } } } },
      },
      status: { lastScheduleTime: '2026-01-10T11:59:30Z', active: [{ name: 'x' }] },
    };
    expect(cronJobPrinter.row(cj, now).cells.slice(0, 7)).toEqual([
      'nightly',
      '0 3 * * *',
      '<none>',
      'False',
      1,
      '30s',
      '2m',
    ]);
  });

  it('HPA targets in v2 and v1 shapes, PDB bounds, revision controllers', () => {
    const v2 = {
      metadata: meta('web'),
      spec: {
        scaleTargetRef: { kind: 'Deployment', name: 'web' },
        minReplicas: 1,
        maxReplicas: 5,
        metrics: [
          {
            type: 'Resource',
            resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } },
          },
        ],
      },
      status: {
        currentReplicas: 2,
        currentMetrics: [
          { type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 41 } } },
        ],
      },
    };
    expect(hpaPrinter.row(v2, now).cells).toEqual(['web', 'Deployment/web', 'cpu: 41%/80%', '1', 5, 2, '2m']);
    const v1 = {
      metadata: meta('web'),
      spec: {
        scaleTargetRef: { kind: 'Deployment', name: 'web' },
        maxReplicas: 5,
        targetCPUUtilizationPercentage: 60,
      },
    };
    expect(hpaPrinter.row(v1, now).cells.slice(2, 4)).toEqual(['cpu: <unknown>/60%', '<unset>']);
    expect(pdbPrinter.row({ metadata: meta('p'), spec: { maxUnavailable: '25%' } }, now).cells).toEqual([
      'p',
      'N/A',
      '25%',
      0,
      '2m',
    ]);
    const revision = {
      metadata: meta('agent-5d', {
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', controller: true }],
      }),
      revision: 2,
    };
    expect(controllerRevisionPrinter.row(revision, now).cells).toEqual([
      'agent-5d',
      'daemonset.apps/agent',
      2,
      '2m',
    ]);
  });
});

describe('other kinds', () => {
  it('RoleBinding subjects, quota usage, CSR conditions and Ingress hosts', () => {
    const rb = {
      metadata: meta('readers'),
      roleRef: { kind: 'ClusterRole', name: 'view' },
      subjects: [
        { kind: 'User', name: 'jane' },
        { kind: 'ServiceAccount', name: 'ci', namespace: 'build' },
      ],
    };
    expect(roleBindingPrinter.row(rb, now).cells).toEqual([
      'readers',
      'ClusterRole/view',
      '2m',
      'jane',
      '',
      'build/ci',
    ]);
    const quota = {
      metadata: meta('q'),
      spec: { hard: { pods: '10', 'limits.cpu': '4', 'requests.cpu': '2' } },
      status: { used: { pods: '3' } },
    };
    expect(resourceQuotaPrinter.row(quota, now).cells).toEqual([
      'q',
      '2m',
      'pods: 3/10, requests.cpu: 0/2',
      'limits.cpu: 0/4',
    ]);
    const csr = {
      metadata: meta('c'),
      spec: { signerName: 'kubernetes.io/kube-apiserver-client', username: 'jane', expirationSeconds: 3600 },
      status: { conditions: [{ type: 'Approved', status: 'True' }], certificate: 'LS0t' },
    };
    expect(csrPrinter.row(csr, now).cells).toEqual([
      'c',
      '2m',
      'kubernetes.io/kube-apiserver-client',
      'jane',
      '60m',
      'Approved,Issued',
    ]);
    const ing = {
      metadata: meta('web'),
      spec: { ingressClassName: 'nginx', rules: [{ host: 'a.example.com' }, {}], tls: [{}] },
      status: { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } },
    };
    expect(ingressPrinter.row(ing, now).cells).toEqual([
      'web',
      'nginx',
      'a.example.com',
      '192.0.2.1',
      '80, 443',
      '2m',
    ]);
  });

  it('every new kind has a printer', () => {
    for (const [group, kind] of [
      ['', 'Node'],
      ['', 'LimitRange'],
      ['apps', 'DaemonSet'],
      ['batch', 'CronJob'],
      ['autoscaling', 'HorizontalPodAutoscaler'],
      ['policy', 'PodDisruptionBudget'],
      ['rbac.authorization.k8s.io', 'ClusterRole'],
      ['networking.k8s.io', 'NetworkPolicy'],
      ['discovery.k8s.io', 'EndpointSlice'],
      ['storage.k8s.io', 'CSIDriver'],
      ['scheduling.k8s.io', 'PriorityClass'],
      ['certificates.k8s.io', 'CertificateSigningRequest'],
      ['node.k8s.io', 'RuntimeClass'],
    ] as const)
      expect(builtinPrinter(group, kind), `${group}/${kind}`).toBeDefined();
  });
});
