/** The core/v1 Pod printer: kubectl's READY, STATUS and RESTARTS logic. */
import * as doc from '../descriptions.ts';
import { arr, at, int, type Json, objects, str } from '../fields.ts';
import { AGE_COLUMN, column, NAME_COLUMN, type Printer, type TableRowCondition, wide } from '../printer.ts';
import { ageSince, humanDuration, instant } from '../time.ts';

const SUCCEEDED: readonly TableRowCondition[] = [
  { type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' },
];
const FAILED: readonly TableRowCondition[] = [
  { type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' },
];

/** A point in time that starts at Go's zero time (undefined) and only moves later. */
class Latest {
  ms: number | undefined;
  observe(timestamp: unknown): void {
    const ms = instant(timestamp);
    if (ms !== undefined && (this.ms === undefined || this.ms < ms)) this.ms = ms;
  }
}

const restartable = (container: Json | undefined) =>
  container !== undefined && container.restartPolicy === 'Always';
/** `isPodInitializedConditionTrue`: the first condition of the type decides. */
const firstConditionTrue = (pod: Json, type: string) =>
  objects(at(pod, 'status', 'conditions')).find((c) => c.type === type)?.status === 'True';
/** `hasPodReadyCondition`: any condition of the type that is True. */
const anyConditionTrue = (pod: Json, type: string) =>
  objects(at(pod, 'status', 'conditions')).some((c) => c.type === type && c.status === 'True');

/**
 * NAME READY STATUS RESTARTS AGE, + IP NODE NOMINATED-NODE READINESS-GATES with `-o wide`, computed
 * as kubectl's `printPod`: init container progress (`Init:1/2`, `Init:CrashLoopBackOff`), sidecar
 * (restartable init) containers counted in READY, container waiting/terminated reasons,
 * `Terminating`, and restarts with the time of the last one (`3 (5m ago)`).
 */
export const podPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.'),
    column('Status', 'string', 'The aggregate status of the containers in this pod.'),
    column(
      'Restarts',
      'string',
      'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
    ),
    AGE_COLUMN,
    wide('IP', doc.POD_IP),
    wide('Node', doc.POD_NODE_NAME),
    wide('Nominated Node', doc.POD_NOMINATED_NODE_NAME),
    wide('Readiness Gates', doc.POD_READINESS_GATES),
  ],
  row(pod, nowMs) {
    const status = at(pod, 'status');
    const phase = str(at(status, 'phase'));
    let reason = str(at(status, 'reason')) || phase;
    for (const condition of objects(at(status, 'conditions'))) {
      if (condition.type === 'PodScheduled' && condition.reason === 'SchedulingGated')
        reason = 'SchedulingGated';
    }
    const initSpecs = objects(at(pod, 'spec', 'initContainers'));
    const initByName = new Map(initSpecs.map((c) => [str(c.name), c]));
    const total = arr(at(pod, 'spec', 'containers')).length + initSpecs.filter(restartable).length;
    let ready = 0;
    let restarts = 0;
    let sidecarRestarts = 0;
    let lastRestart = new Latest();
    const lastSidecarRestart = new Latest();

    let initializing = false;
    const initStatuses = objects(at(status, 'initContainerStatuses'));
    for (const [i, container] of initStatuses.entries()) {
      restarts += int(container.restartCount);
      lastRestart.observe(at(container, 'lastState', 'terminated', 'finishedAt'));
      const isSidecar = restartable(initByName.get(str(container.name)));
      if (isSidecar) {
        sidecarRestarts += int(container.restartCount);
        lastSidecarRestart.observe(at(container, 'lastState', 'terminated', 'finishedAt'));
      }
      const terminated = at(container, 'state', 'terminated');
      const waitingReason = str(at(container, 'state', 'waiting', 'reason'));
      if (terminated !== undefined && terminated !== null && int(at(terminated, 'exitCode')) === 0) continue;
      if (isSidecar && container.started === true) {
        if (container.ready === true) ready++;
        continue;
      }
      if (terminated !== undefined && terminated !== null) {
        const terminatedReason = str(at(terminated, 'reason'));
        const signal = int(at(terminated, 'signal'));
        if (terminatedReason !== '') reason = `Init:${terminatedReason}`;
        else if (signal !== 0) reason = `Init:Signal:${signal}`;
        else reason = `Init:ExitCode:${int(at(terminated, 'exitCode'))}`;
      } else if (waitingReason !== '' && waitingReason !== 'PodInitializing') {
        reason = `Init:${waitingReason}`;
      } else {
        reason = `Init:${i}/${initSpecs.length}`;
      }
      initializing = true;
      break;
    }

    if (!initializing || firstConditionTrue(pod, 'Initialized')) {
      restarts = sidecarRestarts;
      lastRestart = lastSidecarRestart;
      let hasRunning = false;
      const statuses = objects(at(status, 'containerStatuses'));
      for (let i = statuses.length - 1; i >= 0; i--) {
        const container = statuses[i] ?? {};
        restarts += int(container.restartCount);
        lastRestart.observe(at(container, 'lastState', 'terminated', 'finishedAt'));
        const waitingReason = str(at(container, 'state', 'waiting', 'reason'));
        const terminated = at(container, 'state', 'terminated');
        const running = at(container, 'state', 'running');
        if (waitingReason !== '') reason = waitingReason;
        else if (terminated !== undefined && terminated !== null) {
          const terminatedReason = str(at(terminated, 'reason'));
          const signal = int(at(terminated, 'signal'));
          if (terminatedReason !== '') reason = terminatedReason;
          else if (signal !== 0) reason = `Signal:${signal}`;
          else reason = `ExitCode:${int(at(terminated, 'exitCode'))}`;
        } else if (container.ready === true && running !== undefined && running !== null) {
          hasRunning = true;
          ready++;
        }
      }
      if (reason === 'Completed' && hasRunning)
        reason = anyConditionTrue(pod, 'Ready') ? 'Running' : 'NotReady';
    }

    const deleting = typeof at(pod, 'metadata', 'deletionTimestamp') === 'string';
    if (deleting && str(at(status, 'reason')) === 'NodeLost') reason = 'Unknown';
    else if (deleting && phase !== 'Succeeded' && phase !== 'Failed') reason = 'Terminating';

    const restartText =
      restarts !== 0 && lastRestart.ms !== undefined
        ? `${restarts} (${humanDuration(nowMs - lastRestart.ms)} ago)`
        : String(restarts);
    const podIPs = objects(at(status, 'podIPs'));
    const podIP = (podIPs.length > 0 ? str(podIPs[0]?.ip) : str(at(status, 'podIP'))) || '<none>';
    return {
      cells: [
        str(at(pod, 'metadata', 'name')),
        `${ready}/${total}`,
        reason,
        restartText,
        ageSince(at(pod, 'metadata', 'creationTimestamp'), nowMs),
        podIP,
        str(at(pod, 'spec', 'nodeName')) || '<none>',
        str(at(status, 'nominatedNodeName')) || '<none>',
        readinessGates(pod),
      ],
      ...(phase === 'Succeeded'
        ? { conditions: SUCCEEDED }
        : phase === 'Failed'
          ? { conditions: FAILED }
          : {}),
    };
  },
};

/** `<none>`, or `true/total` of the pod's readiness gates whose condition is True. */
function readinessGates(pod: Json): string {
  const gates = objects(at(pod, 'spec', 'readinessGates'));
  if (gates.length === 0) return '<none>';
  const conditions = objects(at(pod, 'status', 'conditions'));
  const passed = gates.filter(
    (gate) => conditions.find((c) => c.type === gate.conditionType)?.status === 'True',
  ).length;
  return `${passed}/${gates.length}`;
}
