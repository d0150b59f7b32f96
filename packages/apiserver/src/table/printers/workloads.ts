/** Printers of apps/v1 Deployment, ReplicaSet, StatefulSet and batch/v1 Job. */
import * as doc from '../descriptions.ts';
import { at, int, intOr, type Json, objects, str } from '../fields.ts';
import {
  AGE_COLUMN,
  CONTAINERS_COLUMN,
  column,
  IMAGES_COLUMN,
  NAME_COLUMN,
  type Printer,
  wide,
} from '../printer.ts';
import { formatLabelSelector, selectorString } from '../selectors.ts';
import { ageSince, humanDuration, instant } from '../time.ts';

const name = (o: Json) => str(at(o, 'metadata', 'name'));
const age = (o: Json, nowMs: number) => ageSince(at(o, 'metadata', 'creationTimestamp'), nowMs);
/** `spec.replicas`, which the apiserver defaults to 1. */
const desired = (o: Json) => intOr(at(o, 'spec', 'replicas'), 1);

/** kubectl's `layoutContainerCells`: container names and images of the pod template, comma-joined. */
function containerCells(o: Json): [string, string] {
  const containers = objects(at(o, 'spec', 'template', 'spec', 'containers'));
  return [containers.map((c) => str(c.name)).join(','), containers.map((c) => str(c.image)).join(',')];
}

const READY_PODS = 'Number of the pod with ready state';

/** NAME READY UP-TO-DATE AVAILABLE AGE, + CONTAINERS IMAGES SELECTOR with `-o wide`. */
export const deploymentPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Ready', 'string', READY_PODS),
    column('Up-to-date', 'string', doc.DEPLOYMENT_UPDATED_REPLICAS),
    column('Available', 'string', doc.DEPLOYMENT_AVAILABLE_REPLICAS),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    wide('Selector', doc.DEPLOYMENT_SELECTOR),
  ],
  row: (o, nowMs) => ({
    cells: [
      name(o),
      `${int(at(o, 'status', 'readyReplicas'))}/${desired(o)}`,
      int(at(o, 'status', 'updatedReplicas')),
      int(at(o, 'status', 'availableReplicas')),
      age(o, nowMs),
      ...containerCells(o),
      selectorString(at(o, 'spec', 'selector')) ?? '<invalid>',
    ],
  }),
};

/** NAME DESIRED CURRENT READY AGE, + CONTAINERS IMAGES SELECTOR with `-o wide`. */
export const replicaSetPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Desired', 'integer', doc.REPLICA_SET_SPEC_REPLICAS),
    column('Current', 'integer', doc.REPLICA_SET_STATUS_REPLICAS),
    column('Ready', 'integer', doc.REPLICA_SET_READY_REPLICAS),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    wide('Selector', doc.REPLICA_SET_SELECTOR),
  ],
  row: (o, nowMs) => ({
    cells: [
      name(o),
      desired(o),
      int(at(o, 'status', 'replicas')),
      int(at(o, 'status', 'readyReplicas')),
      age(o, nowMs),
      ...containerCells(o),
      formatLabelSelector(at(o, 'spec', 'selector')),
    ],
  }),
};

/** NAME READY AGE, + CONTAINERS IMAGES with `-o wide`. */
export const statefulSetPrinter: Printer = {
  columns: [NAME_COLUMN, column('Ready', 'string', READY_PODS), AGE_COLUMN, CONTAINERS_COLUMN, IMAGES_COLUMN],
  row: (o, nowMs) => ({
    cells: [
      name(o),
      `${int(at(o, 'status', 'readyReplicas'))}/${desired(o)}`,
      age(o, nowMs),
      ...containerCells(o),
    ],
  }),
};

/** The status of the first condition of `type` is True (kubectl's `hasJobCondition`). */
function jobCondition(o: Json, type: string): boolean {
  return objects(at(o, 'status', 'conditions')).find((c) => c.type === type)?.status === 'True';
}

function jobStatus(o: Json): string {
  if (jobCondition(o, 'Complete')) return 'Complete';
  if (jobCondition(o, 'Failed')) return 'Failed';
  if (typeof at(o, 'metadata', 'deletionTimestamp') === 'string') return 'Terminating';
  if (jobCondition(o, 'Suspended')) return 'Suspended';
  if (jobCondition(o, 'FailureTarget')) return 'FailureTarget';
  return 'Running';
}

/**
 * `succeeded/completions`, or `succeeded/1 of parallelism` for a work queue. When neither is set
 * both count as 1, and a missing parallelism as 1: the apiserver's batch/v1 defaults.
 */
function jobCompletions(o: Json): string {
  const succeeded = int(at(o, 'status', 'succeeded'));
  const completions = at(o, 'spec', 'completions');
  const parallelism = at(o, 'spec', 'parallelism');
  if (typeof completions === 'number') return `${succeeded}/${int(completions)}`;
  if (typeof parallelism !== 'number') return `${succeeded}/1`;
  return int(parallelism) > 1 ? `${succeeded}/1 of ${int(parallelism)}` : `${succeeded}/1`;
}

function jobDuration(o: Json, nowMs: number): string {
  const start = instant(at(o, 'status', 'startTime'));
  if (start === undefined) return '';
  const completion = instant(at(o, 'status', 'completionTime'));
  return humanDuration((completion ?? nowMs) - start);
}

/** NAME STATUS COMPLETIONS DURATION AGE, + CONTAINERS IMAGES SELECTOR with `-o wide`. */
export const jobPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Status', 'string', 'Status of the job.'),
    column('Completions', 'string', doc.JOB_SUCCEEDED),
    column('Duration', 'string', 'Time required to complete the job.'),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    wide('Selector', doc.JOB_SELECTOR),
  ],
  row: (o, nowMs) => ({
    cells: [
      name(o),
      jobStatus(o),
      jobCompletions(o),
      jobDuration(o, nowMs),
      age(o, nowMs),
      ...containerCells(o),
      formatLabelSelector(at(o, 'spec', 'selector')),
    ],
  }),
};
