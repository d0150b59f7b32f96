/**
 * Printers of apps/v1 DaemonSet and ControllerRevision, batch/v1 CronJob, core/v1
 * ReplicationController and PodTemplate, autoscaling HorizontalPodAutoscaler and policy/v1
 * PodDisruptionBudget (kube-apiserver 1.32's columns and cells).
 */
import { arr, at, int, intOr, type Json, obj, objects, str } from '../fields.ts';
import {
  AGE_COLUMN,
  CONTAINERS_COLUMN,
  column,
  IMAGES_COLUMN,
  NAME_COLUMN,
  type Printer,
  wide,
} from '../printer.ts';
import { formatLabelSelector, formatLabels } from '../selectors.ts';
import { ageSince } from '../time.ts';

const name = (o: Json) => str(at(o, 'metadata', 'name'));
const age = (o: Json, nowMs: number) => ageSince(at(o, 'metadata', 'creationTimestamp'), nowMs);

function containerCells(template: unknown): [string, string] {
  const containers = objects(at(template, 'spec', 'containers'));
  return [containers.map((c) => str(c.name)).join(','), containers.map((c) => str(c.image)).join(',')];
}

/** NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE, + CONTAINERS IMAGES SELECTOR. */
export const daemonSetPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Desired', 'integer', 'The total number of nodes that should be running the daemon pod.'),
    column('Current', 'integer', 'The number of nodes running at least one daemon pod that are supposed to.'),
    column(
      'Ready',
      'integer',
      'The number of nodes that should be running the daemon pod and have it ready.',
    ),
    column('Up-to-date', 'integer', 'The number of nodes running the updated daemon pod.'),
    column('Available', 'integer', 'The number of nodes running the daemon pod available.'),
    column('Node Selector', 'string', 'The node selector of the daemon pods.'),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    wide('Selector', 'A label query over pods that are managed by the daemon set.'),
  ],
  row: (o, nowMs) => ({
    cells: [
      name(o),
      int(at(o, 'status', 'desiredNumberScheduled')),
      int(at(o, 'status', 'currentNumberScheduled')),
      int(at(o, 'status', 'numberReady')),
      int(at(o, 'status', 'updatedNumberScheduled')),
      int(at(o, 'status', 'numberAvailable')),
      formatLabels(at(o, 'spec', 'template', 'spec', 'nodeSelector')),
      age(o, nowMs),
      ...containerCells(at(o, 'spec', 'template')),
      formatLabelSelector(at(o, 'spec', 'selector')),
    ],
  }),
};

/** `kind.group/name` of the controlling owner (kubectl's `formatResourceName` with the kind), or `<none>`. */
function controllerOf(o: Json): string {
  const owner = objects(at(o, 'metadata', 'ownerReferences')).find((r) => r.controller === true);
  if (owner === undefined) return '<none>';
  const apiVersion = str(owner.apiVersion);
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const kind = str(owner.kind);
  if (kind === '') return str(owner.name);
  return `${(group === '' ? kind : `${kind}.${group}`).toLowerCase()}/${str(owner.name)}`;
}

/** NAME CONTROLLER REVISION AGE. */
export const controllerRevisionPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Controller', 'string', 'Controller of the object'),
    column('Revision', 'string', 'The revision number of the state represented by this object.'),
    AGE_COLUMN,
  ],
  row: (o, nowMs) => ({ cells: [name(o), controllerOf(o), int(o.revision), age(o, nowMs)] }),
};

function boolPtr(value: unknown): string {
  if (typeof value !== 'boolean') return '<unset>';
  return value ? 'True' : 'False';
}

/** NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE, + CONTAINERS IMAGES SELECTOR. */
export const cronJobPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Schedule', 'string', 'The schedule in Cron format.'),
    column('Timezone', 'string', 'The time zone name for the given schedule.'),
    column('Suspend', 'boolean', 'Whether subsequent executions are suspended.'),
    column('Active', 'integer', 'The number of currently running jobs.'),
    column('Last Schedule', 'string', 'When the job was last successfully scheduled.'),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    wide('Selector', 'A label query over pods that should match the pod count.'),
  ],
  row: (o, nowMs) => {
    const last = at(o, 'status', 'lastScheduleTime');
    const timeZone = str(at(o, 'spec', 'timeZone'));
    return {
      cells: [
        name(o),
        str(at(o, 'spec', 'schedule')),
        timeZone === '' ? '<none>' : timeZone,
        boolPtr(at(o, 'spec', 'suspend')),
        arr(at(o, 'status', 'active')).length,
        typeof last === 'string' ? ageSince(last, nowMs) : '<none>',
        age(o, nowMs),
        ...containerCells(at(o, 'spec', 'jobTemplate', 'spec', 'template')),
        formatLabelSelector(at(o, 'spec', 'jobTemplate', 'spec', 'selector')),
      ],
    };
  },
};

/** NAME DESIRED CURRENT READY AGE, + CONTAINERS IMAGES SELECTOR (the selector is a label map). */
export const replicationControllerPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Desired', 'integer', 'The number of desired replicas.'),
    column('Current', 'integer', 'The most recently observed number of replicas.'),
    column('Ready', 'integer', 'The number of ready replicas.'),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    wide('Selector', 'A label query over pods that should match the replicas count.'),
  ],
  row: (o, nowMs) => ({
    cells: [
      name(o),
      intOr(at(o, 'spec', 'replicas'), 1),
      int(at(o, 'status', 'replicas')),
      int(at(o, 'status', 'readyReplicas')),
      age(o, nowMs),
      ...containerCells(at(o, 'spec', 'template')),
      formatLabels(at(o, 'spec', 'selector')),
    ],
  }),
};

/** NAME CONTAINERS IMAGES POD LABELS. */
export const podTemplatePrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Containers', 'string', 'Names of each container in the template.'),
    column('Images', 'string', 'Images referenced by each container in the template.'),
    column('Pod Labels', 'string', 'The labels for the pod template.'),
  ],
  row: (o) => ({
    cells: [name(o), ...containerCells(o.template), formatLabels(at(o, 'template', 'metadata', 'labels'))],
  }),
};

const MAX_METRICS = 2;

/** One metric's `current/target` as kubectl's `formatHPAMetrics` prints it. */
function metricText(spec: Json, current: Json | undefined): string {
  const type = str(spec.type);
  const source = obj(spec[lowerFirst(type)]);
  const target = obj(source.target);
  const now = obj(obj(current?.[lowerFirst(type)]).current);
  const metricName = str(source.name) || str(obj(source.metric).name);
  if ((type === 'Resource' || type === 'ContainerResource') && target.type === 'Utilization') {
    const shown = typeof now.averageUtilization === 'number' ? `${now.averageUtilization}%` : '<unknown>';
    return `${metricName}: ${shown}/${int(target.averageUtilization)}%`;
  }
  const wanted = str(target.averageValue) || str(target.value);
  const have = str(now.averageValue) || str(now.value);
  const prefix = type === 'Resource' || type === 'ContainerResource' ? `${metricName}: ` : '';
  return `${prefix}${have === '' ? '<unknown>' : have}/${wanted === '' ? '<unknown>' : wanted}${target.type === 'AverageValue' && type !== 'Resource' && type !== 'ContainerResource' ? ' (avg)' : ''}`;
}

function lowerFirst(text: string): string {
  return text === '' ? text : `${text[0]?.toLowerCase()}${text.slice(1)}`;
}

function hpaTargets(o: Json): string {
  const specs = objects(at(o, 'spec', 'metrics'));
  if (specs.length === 0) return '<none>';
  const currents = objects(at(o, 'status', 'currentMetrics'));
  const texts = specs.map((m, i) => metricText(m, currents[i]));
  const shown = texts.slice(0, MAX_METRICS).join(', ');
  return texts.length > MAX_METRICS ? `${shown} + ${texts.length - MAX_METRICS} more...` : shown;
}

/** NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE (both versions print the stored v2 shape). */
export const hpaPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Reference', 'string', 'The reference to the resource being scaled.'),
    column('Targets', 'string', 'The metrics and their targets.'),
    column('MinPods', 'string', 'The lower limit of replicas.'),
    column('MaxPods', 'integer', 'The upper limit of replicas.'),
    column('Replicas', 'integer', 'The current number of replicas.'),
    AGE_COLUMN,
  ],
  row: (o, nowMs) => {
    const ref = obj(at(o, 'spec', 'scaleTargetRef'));
    const min = at(o, 'spec', 'minReplicas');
    let targets = hpaTargets(o);
    const cpu = at(o, 'spec', 'targetCPUUtilizationPercentage');
    if (typeof cpu === 'number') {
      const now = at(o, 'status', 'currentCPUUtilizationPercentage');
      targets = `cpu: ${typeof now === 'number' ? `${now}%` : '<unknown>'}/${cpu}%`;
    }
    return {
      cells: [
        name(o),
        `${str(ref.kind)}/${str(ref.name)}`,
        targets,
        typeof min === 'number' ? String(min) : '<unset>',
        int(at(o, 'spec', 'maxReplicas')),
        int(at(o, 'status', 'currentReplicas')),
        age(o, nowMs),
      ],
    };
  },
};

function intOrString(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return value;
  return 'N/A';
}

/** NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE. */
export const pdbPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Min Available', 'string', 'The minimum number of pods that must be available.'),
    column('Max Unavailable', 'string', 'The maximum number of pods that may be unavailable.'),
    column('Allowed Disruptions', 'integer', 'The number of pod disruptions that are currently allowed.'),
    AGE_COLUMN,
  ],
  row: (o, nowMs) => ({
    cells: [
      name(o),
      intOrString(at(o, 'spec', 'minAvailable')),
      intOrString(at(o, 'spec', 'maxUnavailable')),
      int(at(o, 'status', 'disruptionsAllowed')),
      age(o, nowMs),
    ],
  }),
};
