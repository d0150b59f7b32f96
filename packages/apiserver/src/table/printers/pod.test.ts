import { describe, expect, it } from 'vitest';
import { podPrinter } from './pod.ts';

const now = Date.UTC(2026, 0, 10, 12, 0, 0);
const ago = (ms: number) => new Date(now - ms).toISOString();
const MIN = 60_000;

const running = (name: string, ready = true) => ({
  name,
  ready,
  restartCount: 0,
  started: true,
  state: { running: { startedAt: ago(5 * MIN) } },
});

function pod(spec: object, status: object, metadata: object = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web-7d9c5', namespace: 'shop', creationTimestamp: ago(5 * MIN), ...metadata },
    spec: { containers: [{ name: 'app', image: 'nginx:1.27' }], ...spec },
    status: { phase: 'Running', ...status },
  };
}

const cells = (object: Record<string, unknown>) => podPrinter.row(object, now).cells;

describe('Pod', () => {
  it('has NAME READY STATUS RESTARTS AGE, and IP NODE NOMINATED-NODE READINESS-GATES for -o wide', () => {
    expect(podPrinter.columns.map((c) => [c.name, c.type, c.priority])).toEqual([
      ['Name', 'string', 0],
      ['Ready', 'string', 0],
      ['Status', 'string', 0],
      ['Restarts', 'string', 0],
      ['Age', 'string', 0],
      ['IP', 'string', 1],
      ['Node', 'string', 1],
      ['Nominated Node', 'string', 1],
      ['Readiness Gates', 'string', 1],
    ]);
  });

  it('prints a running pod with its IP and node', () => {
    const p = pod(
      { nodeName: 'node-1', containers: [{ name: 'app' }, { name: 'proxy' }] },
      {
        podIP: '10.244.0.5',
        podIPs: [{ ip: '10.244.0.5' }, { ip: 'fd00::5' }],
        containerStatuses: [running('app'), running('proxy')],
      },
    );
    expect(cells(p)).toEqual([
      'web-7d9c5',
      '2/2',
      'Running',
      '0',
      '5m',
      '10.244.0.5',
      'node-1',
      '<none>',
      '<none>',
    ]);
    expect(podPrinter.row(p, now).conditions).toBeUndefined();
  });

  it('prints a pending pod that is not scheduled yet with <none> for IP and node', () => {
    const p = pod(
      {},
      { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] },
    );
    expect(cells(p)).toEqual([
      'web-7d9c5',
      '0/1',
      'Pending',
      '0',
      '5m',
      '<none>',
      '<none>',
      '<none>',
      '<none>',
    ]);
  });

  it('shows SchedulingGated for a pod held by scheduling gates', () => {
    const p = pod(
      {},
      {
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }],
      },
    );
    expect(cells(p)[2]).toBe('SchedulingGated');
  });

  it('shows a crash looping container with its restarts and when it last restarted', () => {
    const p = pod(
      {},
      {
        containerStatuses: [
          {
            name: 'app',
            ready: false,
            restartCount: 4,
            state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s' } },
            lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: ago(2 * MIN) } },
          },
        ],
      },
    );
    expect(cells(p).slice(1, 4)).toEqual(['0/1', 'CrashLoopBackOff', '4 (2m ago)']);
  });

  it('shows init container progress, and an init failure by its reason', () => {
    const spec = { initContainers: [{ name: 'migrate' }, { name: 'seed' }] };
    const progressing = pod(spec, {
      phase: 'Pending',
      initContainerStatuses: [
        { name: 'migrate', restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed' } } },
        { name: 'seed', restartCount: 0, state: { running: {} } },
      ],
      containerStatuses: [
        { name: 'app', restartCount: 0, state: { waiting: { reason: 'PodInitializing' } } },
      ],
    });
    expect(cells(progressing).slice(1, 4)).toEqual(['0/1', 'Init:1/2', '0']);

    const failing = pod(spec, {
      phase: 'Pending',
      initContainerStatuses: [
        {
          name: 'migrate',
          restartCount: 3,
          state: { waiting: { reason: 'CrashLoopBackOff' } },
          lastState: { terminated: { exitCode: 2, finishedAt: ago(30_000) } },
        },
      ],
    });
    expect(cells(failing).slice(1, 4)).toEqual(['0/1', 'Init:CrashLoopBackOff', '3 (30s ago)']);

    const exited = pod(spec, {
      phase: 'Pending',
      initContainerStatuses: [{ name: 'migrate', restartCount: 0, state: { terminated: { exitCode: 3 } } }],
    });
    expect(cells(exited)[2]).toBe('Init:ExitCode:3');
  });

  it('counts ready sidecars (restartable init containers) in READY and their restarts', () => {
    const p = pod(
      { initContainers: [{ name: 'mesh', restartPolicy: 'Always' }, { name: 'setup' }] },
      {
        conditions: [
          { type: 'Initialized', status: 'True' },
          { type: 'Ready', status: 'True' },
        ],
        initContainerStatuses: [
          {
            name: 'mesh',
            ready: true,
            started: true,
            restartCount: 1,
            state: { running: {} },
            lastState: { terminated: { exitCode: 1, finishedAt: ago(3 * MIN) } },
          },
          {
            name: 'setup',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode: 0, reason: 'Completed' } },
          },
        ],
        containerStatuses: [running('app')],
      },
    );
    expect(cells(p).slice(1, 4)).toEqual(['2/2', 'Running', '1 (3m ago)']);
  });

  it('names a terminated container by its reason, else its signal or exit code', () => {
    const terminated = (t: object) =>
      pod({}, { containerStatuses: [{ name: 'app', restartCount: 0, state: { terminated: t } }] });
    expect(cells(terminated({ exitCode: 137, reason: 'OOMKilled' }))[2]).toBe('OOMKilled');
    expect(cells(terminated({ exitCode: 137, signal: 9 }))[2]).toBe('Signal:9');
    expect(cells(terminated({ exitCode: 2 }))[2]).toBe('ExitCode:2');
  });

  it('marks a completed pod with a Completed row condition', () => {
    const p = pod(
      {},
      {
        phase: 'Succeeded',
        containerStatuses: [
          { name: 'app', restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed' } } },
        ],
      },
    );
    expect(podPrinter.row(p, now)).toEqual({
      cells: ['web-7d9c5', '0/1', 'Completed', '0', '5m', '<none>', '<none>', '<none>', '<none>'],
      conditions: [
        {
          type: 'Completed',
          status: 'True',
          reason: 'Succeeded',
          message: 'The pod has completed successfully.',
        },
      ],
    });
    const failed = pod({}, { phase: 'Failed', reason: 'Evicted' });
    expect(podPrinter.row(failed, now).conditions).toEqual([
      { type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' },
    ]);
    expect(cells(failed)[2]).toBe('Evicted');
  });

  it('reports Running or NotReady when one container completed and another still runs', () => {
    const statuses = [
      running('worker'),
      { name: 'app', restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed' } } },
    ];
    const withReady = pod(
      { containers: [{ name: 'app' }, { name: 'worker' }] },
      { conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: statuses },
    );
    expect(cells(withReady).slice(1, 3)).toEqual(['1/2', 'Running']);
    const notReady = pod(
      { containers: [{ name: 'app' }, { name: 'worker' }] },
      { containerStatuses: statuses },
    );
    expect(cells(notReady)[2]).toBe('NotReady');
  });

  it('shows Terminating while a deleted pod runs, and Unknown for a pod on a lost node', () => {
    const deleting = { deletionTimestamp: ago(10_000) };
    expect(cells(pod({}, { containerStatuses: [running('app')] }, deleting))[2]).toBe('Terminating');
    expect(cells(pod({}, { reason: 'NodeLost' }, deleting))[2]).toBe('Unknown');
    expect(cells(pod({}, { phase: 'Succeeded' }, deleting))[2]).toBe('Succeeded');
  });

  it('prints readiness gates as passed/total', () => {
    const p = pod(
      { readinessGates: [{ conditionType: 'example.com/lb' }, { conditionType: 'example.com/dns' }] },
      {
        conditions: [
          { type: 'example.com/lb', status: 'True' },
          { type: 'example.com/dns', status: 'False' },
        ],
      },
    );
    expect(cells(p)[8]).toBe('1/2');
  });
});
