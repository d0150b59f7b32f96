import { describe, expect, it } from 'vitest';
import { deploymentPrinter, jobPrinter, replicaSetPrinter, statefulSetPrinter } from './workloads.ts';

const now = Date.UTC(2026, 0, 10, 12, 0, 0);
const ago = (ms: number) => new Date(now - ms).toISOString();
const H = 3_600_000;
const names = (printer: { columns: readonly { name: string; priority: number }[] }) =>
  printer.columns.map((c) => (c.priority > 0 ? `(${c.name})` : c.name));

const template = {
  metadata: { labels: { app: 'web' } },
  spec: {
    containers: [
      { name: 'app', image: 'ghcr.io/acme/web:1.4.2' },
      { name: 'proxy', image: 'envoyproxy/envoy:v1.31' },
    ],
  },
};

describe('Deployment', () => {
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'shop', creationTimestamp: ago(26 * H) },
    spec: {
      replicas: 3,
      selector: {
        matchLabels: { app: 'web' },
        matchExpressions: [{ key: 'env', operator: 'In', values: ['prod', 'canary'] }],
      },
      template,
    },
    status: { replicas: 3, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 1 },
  };

  it('prints NAME READY UP-TO-DATE AVAILABLE AGE, + CONTAINERS IMAGES SELECTOR wide', () => {
    expect(names(deploymentPrinter)).toEqual([
      'Name',
      'Ready',
      'Up-to-date',
      'Available',
      'Age',
      '(Containers)',
      '(Images)',
      '(Selector)',
    ]);
    expect(deploymentPrinter.row(deployment, now).cells).toEqual([
      'web',
      '2/3',
      2,
      1,
      '26h',
      'app,proxy',
      'ghcr.io/acme/web:1.4.2,envoyproxy/envoy:v1.31',
      'app=web,env in (canary,prod)',
    ]);
  });

  it('counts an absent spec.replicas as the default 1, and prints <invalid> for a bad selector', () => {
    const fresh = {
      metadata: { name: 'new', creationTimestamp: ago(1000) },
      spec: { selector: { matchExpressions: [{ key: 'a', operator: 'Has' }] } },
    };
    expect(deploymentPrinter.row(fresh, now).cells).toEqual(['new', '0/1', 0, 0, '1s', '', '', '<invalid>']);
  });
});

describe('ReplicaSet', () => {
  it('prints NAME DESIRED CURRENT READY AGE, + CONTAINERS IMAGES SELECTOR wide', () => {
    expect(names(replicaSetPrinter)).toEqual([
      'Name',
      'Desired',
      'Current',
      'Ready',
      'Age',
      '(Containers)',
      '(Images)',
      '(Selector)',
    ]);
    expect(replicaSetPrinter.columns.slice(1, 4).map((c) => c.type)).toEqual([
      'integer',
      'integer',
      'integer',
    ]);
    const rs = {
      metadata: { name: 'web-6b7f9c', creationTimestamp: ago(3 * H + 60_000) },
      spec: {
        replicas: 3,
        selector: { matchLabels: { 'pod-template-hash': '6b7f9c', app: 'web' } },
        template,
      },
      status: { replicas: 3, readyReplicas: 1 },
    };
    expect(replicaSetPrinter.row(rs, now).cells).toEqual([
      'web-6b7f9c',
      3,
      3,
      1,
      '3h1m',
      'app,proxy',
      'ghcr.io/acme/web:1.4.2,envoyproxy/envoy:v1.31',
      'app=web,pod-template-hash=6b7f9c',
    ]);
    const unselected = { metadata: { name: 'x' }, spec: { replicas: 0, selector: {} } };
    expect(replicaSetPrinter.row(unselected, now).cells).toEqual([
      'x',
      0,
      0,
      0,
      '<unknown>',
      '',
      '',
      '<none>',
    ]);
  });
});

describe('StatefulSet', () => {
  it('prints NAME READY AGE, + CONTAINERS IMAGES wide', () => {
    expect(names(statefulSetPrinter)).toEqual(['Name', 'Ready', 'Age', '(Containers)', '(Images)']);
    const sts = {
      metadata: { name: 'db', creationTimestamp: ago(9 * 24 * H) },
      spec: { replicas: 3, template },
      status: { readyReplicas: 3 },
    };
    expect(statefulSetPrinter.row(sts, now).cells).toEqual([
      'db',
      '3/3',
      '9d',
      'app,proxy',
      'ghcr.io/acme/web:1.4.2,envoyproxy/envoy:v1.31',
    ]);
  });
});

describe('Job', () => {
  const job = (spec: object, status: object, metadata: object = {}) => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'backup', creationTimestamp: ago(H), ...metadata },
    spec: { template, selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': 'u-1' } }, ...spec },
    status,
  });

  it('prints NAME STATUS COMPLETIONS DURATION AGE, + CONTAINERS IMAGES SELECTOR wide', () => {
    expect(names(jobPrinter)).toEqual([
      'Name',
      'Status',
      'Completions',
      'Duration',
      'Age',
      '(Containers)',
      '(Images)',
      '(Selector)',
    ]);
    const done = job(
      { completions: 1, parallelism: 1 },
      {
        succeeded: 1,
        startTime: ago(H),
        completionTime: ago(H - 95_000),
        conditions: [{ type: 'Complete', status: 'True' }],
      },
    );
    expect(jobPrinter.row(done, now).cells).toEqual([
      'backup',
      'Complete',
      '1/1',
      '95s',
      '60m',
      'app,proxy',
      'ghcr.io/acme/web:1.4.2,envoyproxy/envoy:v1.31',
      'batch.kubernetes.io/controller-uid=u-1',
    ]);
  });

  it('shows a running job’s duration so far and work-queue completions', () => {
    const queue = job({ parallelism: 4 }, { succeeded: 2, active: 2, startTime: ago(5 * 60_000) });
    expect(jobPrinter.row(queue, now).cells.slice(1, 4)).toEqual(['Running', '2/1 of 4', '5m']);
    const unstarted = job({}, {});
    expect(jobPrinter.row(unstarted, now).cells.slice(1, 4)).toEqual(['Running', '0/1', '']);
  });

  it('derives the status from conditions in kubectl’s order', () => {
    const status = (conditions: object[], metadata: object = {}) =>
      jobPrinter.row(job({}, { conditions }, metadata), now).cells[1];
    expect(status([{ type: 'Failed', status: 'True' }])).toBe('Failed');
    expect(status([{ type: 'Suspended', status: 'True' }])).toBe('Suspended');
    expect(status([{ type: 'Suspended', status: 'True' }], { deletionTimestamp: ago(1000) })).toBe(
      'Terminating',
    );
    expect(status([{ type: 'FailureTarget', status: 'True' }])).toBe('FailureTarget');
    expect(
      status([
        { type: 'Complete', status: 'False' },
        { type: 'Complete', status: 'True' },
      ]),
    ).toBe('Running');
  });
});
