import { describe, expect, it } from 'vitest';
import { coreEventPrinter, eventsEventPrinter } from './event.ts';

const now = Date.UTC(2026, 0, 10, 12, 0, 0);
const ago = (ms: number) => new Date(now - ms).toISOString();
const MIN = 60_000;

describe('Event', () => {
  it('has LAST SEEN TYPE REASON OBJECT MESSAGE, and SUBOBJECT SOURCE FIRST-SEEN COUNT NAME for -o wide', () => {
    expect(coreEventPrinter.columns.map((c) => [c.name, c.priority])).toEqual([
      ['Last Seen', 0],
      ['Type', 0],
      ['Reason', 0],
      ['Object', 0],
      ['Subobject', 1],
      ['Source', 1],
      ['Message', 0],
      ['First Seen', 1],
      ['Count', 1],
      ['Name', 1],
    ]);
    expect(coreEventPrinter.columns[9]?.format).toBe('name');
  });

  it('prints a core/v1 event recorded by a kubelet', () => {
    const event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'web-7d9c5.17a2b3c4d5e6f708', namespace: 'shop' },
      involvedObject: {
        kind: 'Pod',
        name: 'web-7d9c5',
        namespace: 'shop',
        fieldPath: 'spec.containers{app}',
      },
      reason: 'BackOff',
      message: 'Back-off restarting failed container app in pod web-7d9c5\n',
      source: { component: 'kubelet', host: 'node-1' },
      firstTimestamp: ago(12 * MIN),
      lastTimestamp: ago(30_000),
      count: 7,
      type: 'Warning',
    };
    expect(coreEventPrinter.row(event, now).cells).toEqual([
      '30s',
      'Warning',
      'BackOff',
      'pod/web-7d9c5',
      'spec.containers{app}',
      'kubelet, node-1',
      'Back-off restarting failed container app in pod web-7d9c5',
      '12m',
      7,
      'web-7d9c5.17a2b3c4d5e6f708',
    ]);
  });

  it('uses eventTime, the series and the reporting controller for events without legacy fields', () => {
    const event = {
      metadata: { name: 'e1' },
      involvedObject: { kind: 'Deployment', name: 'web' },
      reason: 'ScalingReplicaSet',
      message: 'Scaled up replica set web-6b7f9c to 3',
      eventTime: ago(20 * MIN),
      series: { count: 4, lastObservedTime: ago(2 * MIN) },
      reportingComponent: 'deployment-controller',
      type: 'Normal',
    };
    expect(coreEventPrinter.row(event, now).cells).toEqual([
      '2m',
      'Normal',
      'ScalingReplicaSet',
      'deployment/web',
      '',
      'deployment-controller',
      'Scaled up replica set web-6b7f9c to 3',
      '20m',
      4,
      'e1',
    ]);
  });

  it('counts a singleton without count as 1 and prints the kind alone without a name', () => {
    const event = {
      metadata: { name: 'e2' },
      involvedObject: { kind: 'Node' },
      eventTime: ago(5_000),
      type: 'Normal',
    };
    const cells = eventsEventPrinter.row({}, now).cells;
    expect(cells[8]).toBe(1);
    expect(coreEventPrinter.row(event, now).cells.slice(0, 4)).toEqual(['5s', 'Normal', '', 'node']);
    expect(coreEventPrinter.row(event, now).cells[8]).toBe(1);
  });

  it('prints an events.k8s.io/v1 event from its regarding, note and deprecated fields', () => {
    const event = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'web.1', namespace: 'shop' },
      regarding: { kind: 'Pod', name: 'web', fieldPath: 'spec.containers{app}' },
      note: '  Pulled image "nginx:1.27"  ',
      reason: 'Pulled',
      type: 'Normal',
      reportingController: 'kubelet',
      reportingInstance: 'node-2',
      eventTime: ago(MIN),
      deprecatedFirstTimestamp: ago(3 * MIN),
      deprecatedLastTimestamp: ago(MIN),
      deprecatedCount: 2,
      deprecatedSource: { component: 'kubelet' },
    };
    expect(eventsEventPrinter.row(event, now).cells).toEqual([
      '60s',
      'Normal',
      'Pulled',
      'pod/web',
      'spec.containers{app}',
      'kubelet, node-2',
      'Pulled image "nginx:1.27"',
      '3m',
      2,
      'web.1',
    ]);
  });
});
