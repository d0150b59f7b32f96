import type { StatusCause } from '@converge/runtime';
import type { JsonObject, MutableObject, Strategy } from './api-resource.ts';
import { cause } from './field-causes.ts';
import { asObject, ensureObject, getPath, setDefault } from './json-util.ts';
import { defaultPodSpec } from './strategies-core.ts';
import { goMap, jobSpecCauses, selectorCauses, templateCauses } from './strategies-workloads.ts';
import { immutable, items, nonNegative, requiredString } from './strategy-rules.ts';

/** apps/v1 DaemonSet: RollingUpdate (maxUnavailable 1, maxSurge 0), history 10; selector checks. */
export const daemonSetStrategy: Strategy = {
  prepareForCreate: (object) => prepareDaemonSet(object),
  prepareForUpdate: (object, old) => [
    ...prepareDaemonSet(object),
    ...immutable('spec.selector', getPath(object, 'spec.selector'), getPath(old, 'spec.selector')),
  ],
};

function prepareDaemonSet(object: MutableObject): StatusCause[] {
  const spec = ensureObject(object, 'spec');
  setDefault(spec, 'revisionHistoryLimit', 10);
  const update = ensureObject(spec, 'updateStrategy');
  setDefault(update, 'type', 'RollingUpdate');
  if (update.type === 'RollingUpdate') {
    const rolling = ensureObject(update, 'rollingUpdate');
    setDefault(rolling, 'maxUnavailable', 1);
    setDefault(rolling, 'maxSurge', 0);
  }
  const causes = [...selectorCauses(spec, 'daemonset'), ...templateCauses(spec)];
  const policy = getPath(spec, 'template.spec.restartPolicy');
  if (policy !== undefined && policy !== 'Always')
    causes.push(cause.unsupported('spec.template.spec.restartPolicy', policy, ['Always']));
  if (update.type !== 'RollingUpdate' && update.type !== 'OnDelete')
    causes.push(cause.unsupported('spec.updateStrategy.type', update.type, ['OnDelete', 'RollingUpdate']));
  return causes;
}

const CRON_FIELDS = 5;
const CRON_DESCRIPTORS = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'];
const CRON_TOKEN = /^(\*|\?|[0-9A-Za-z]+(-[0-9A-Za-z]+)?)(\/[0-9]+)?$/;

/** robfig/cron's standard parser, as far as the messages users meet go. */
function scheduleCauses(schedule: unknown): StatusCause[] {
  if (typeof schedule !== 'string' || schedule === '') return [cause.required('spec.schedule')];
  if (/(^|\s)(CRON_)?TZ=/.test(schedule))
    return [
      cause.invalid(
        'spec.schedule',
        schedule,
        'cannot use TZ or CRON_TZ in schedule, use timeZone field instead',
      ),
    ];
  if (schedule.startsWith('@')) {
    if (CRON_DESCRIPTORS.includes(schedule) || schedule.startsWith('@every ')) return [];
    return [cause.invalid('spec.schedule', schedule, `unrecognized descriptor: ${schedule}`)];
  }
  const fields = schedule.trim().split(/\s+/);
  if (fields.length !== CRON_FIELDS)
    return [
      cause.invalid(
        'spec.schedule',
        schedule,
        `expected exactly ${CRON_FIELDS} fields, found ${fields.length}: [${fields.join(' ')}]`,
      ),
    ];
  for (const field of fields) {
    for (const part of field.split(',')) {
      if (!CRON_TOKEN.test(part))
        return [
          cause.invalid(
            'spec.schedule',
            schedule,
            `failed to parse int from ${part}: strconv.Atoi: parsing ${JSON.stringify(part)}: invalid syntax`,
          ),
        ];
    }
  }
  return [];
}

function prepareCronJob(object: MutableObject): StatusCause[] {
  const spec = ensureObject(object, 'spec');
  setDefault(spec, 'concurrencyPolicy', 'Allow');
  setDefault(spec, 'suspend', false);
  setDefault(spec, 'successfulJobsHistoryLimit', 3);
  setDefault(spec, 'failedJobsHistoryLimit', 1);
  const causes = scheduleCauses(spec.schedule);
  if (!['Allow', 'Forbid', 'Replace'].includes(String(spec.concurrencyPolicy)))
    causes.push(
      cause.unsupported('spec.concurrencyPolicy', spec.concurrencyPolicy, ['Allow', 'Forbid', 'Replace']),
    );
  for (const name of ['startingDeadlineSeconds', 'successfulJobsHistoryLimit', 'failedJobsHistoryLimit'])
    causes.push(...nonNegative(`spec.${name}`, spec[name]));
  const jobTemplate = asObject(spec.jobTemplate);
  const jobSpec = asObject(jobTemplate?.spec);
  if (jobSpec === undefined) causes.push(cause.required('spec.jobTemplate.spec.template'));
  else causes.push(...jobSpecCauses(jobSpec, 'spec.jobTemplate.spec', false));
  const name = object.metadata.name;
  // the Job names (name + 11 characters) must fit in a label value
  if (typeof name === 'string' && name.length > 52)
    causes.push(cause.invalid('metadata.name', name, 'must be no more than 52 characters'));
  return causes;
}

/** batch/v1 CronJob: Allow, not suspended, history 3/1; schedule and job template checks. */
export const cronJobStrategy: Strategy = {
  prepareForCreate: (object) => prepareCronJob(object),
  prepareForUpdate: (object) => prepareCronJob(object),
};

/** core/v1 ReplicationController: replicas 1, selector and labels from the template. */
export const replicationControllerStrategy: Strategy = {
  prepareForCreate: (object) => prepareReplicationController(object),
  prepareForUpdate: (object) => prepareReplicationController(object),
};

function prepareReplicationController(object: MutableObject): StatusCause[] {
  const spec = ensureObject(object, 'spec');
  setDefault(spec, 'replicas', 1);
  const template = asObject(spec.template);
  const templateLabels = asObject(asObject(template?.metadata)?.labels) ?? {};
  if (Object.keys(asObject(spec.selector) ?? {}).length === 0 && Object.keys(templateLabels).length > 0)
    spec.selector = { ...templateLabels };
  const labels = asObject(object.metadata.labels) ?? {};
  if (Object.keys(labels).length === 0 && Object.keys(templateLabels).length > 0)
    object.metadata.labels = { ...templateLabels };
  const causes = nonNegative('spec.replicas', spec.replicas);
  const selector = asObject(spec.selector) ?? {};
  if (Object.keys(selector).length === 0) causes.push(cause.required('spec.selector'));
  if (template === undefined) {
    causes.push(cause.required('spec.template'));
    return causes;
  }
  for (const [key, value] of Object.entries(selector)) {
    if (templateLabels[key] !== value) {
      causes.push(
        cause.invalid(
          'spec.template.metadata.labels',
          goMap(templateLabels),
          '`selector` does not match template `labels`',
        ),
      );
      break;
    }
  }
  causes.push(...defaultPodSpec(ensureObject(template, 'spec'), 'spec.template.spec'));
  return causes;
}

/** core/v1 PodTemplate: the pod spec's defaults. */
export const podTemplateStrategy: Strategy = {
  prepareForCreate: (object) => preparePodTemplate(object),
  prepareForUpdate: (object) => preparePodTemplate(object),
};

function preparePodTemplate(object: MutableObject): StatusCause[] {
  const template = asObject(object.template);
  if (template === undefined) return [];
  return defaultPodSpec(ensureObject(template, 'spec'), 'template.spec');
}

/** apps/v1 ControllerRevision: `data` never changes. */
export const controllerRevisionStrategy: Strategy = {
  prepareForCreate: (object) => nonNegative('revision', object.revision),
  prepareForUpdate: (object, old) => [
    ...nonNegative('revision', object.revision),
    ...immutable('data', object.data, (old as unknown as JsonObject).data),
  ],
};

function prepareHpa(object: MutableObject, v1 = false): StatusCause[] {
  const spec = ensureObject(object, 'spec');
  setDefault(spec, 'minReplicas', 1);
  if (v1) {
    const target = spec.targetCPUUtilizationPercentage;
    const causes = hpaBounds(spec);
    if (target !== undefined && (typeof target !== 'number' || !Number.isInteger(target) || target < 1))
      causes.push(
        cause.invalid('spec.targetCPUUtilizationPercentage', target, 'must be greater than or equal to 1'),
      );
    return causes;
  }
  if (!Array.isArray(spec.metrics) || spec.metrics.length === 0)
    spec.metrics = [
      {
        type: 'Resource',
        resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } },
      },
    ];
  const causes = hpaBounds(spec);
  for (const [metric, i] of items(spec.metrics)) {
    const types = ['ContainerResource', 'External', 'Object', 'Pods', 'Resource'];
    if (!types.includes(String(metric.type)))
      causes.push(cause.unsupported(`spec.metrics[${i}].type`, metric.type ?? '', types));
  }
  return causes;
}

function hpaBounds(spec: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const target = asObject(spec.scaleTargetRef);
  causes.push(...requiredString('spec.scaleTargetRef.kind', target?.kind));
  causes.push(...requiredString('spec.scaleTargetRef.name', target?.name));
  const min = spec.minReplicas;
  const max = spec.maxReplicas;
  if (typeof min !== 'number' || !Number.isInteger(min) || min < 1)
    causes.push(cause.invalid('spec.minReplicas', min ?? 0, 'must be greater than or equal to 1'));
  if (typeof max !== 'number' || !Number.isInteger(max) || max < 1)
    causes.push(cause.invalid('spec.maxReplicas', max ?? 0, 'must be greater than or equal to 1'));
  else if (typeof min === 'number' && min > max)
    causes.push(cause.invalid('spec.minReplicas', min, 'must be less than or equal to maxReplicas'));
  return causes;
}

/** autoscaling/v2 HorizontalPodAutoscaler: minReplicas 1, CPU 80 % when no metrics; replica bounds. */
export const hpaStrategy: Strategy = {
  prepareForCreate: (object) => prepareHpa(object),
  prepareForUpdate: (object) => prepareHpa(object),
};

/** autoscaling/v1 HorizontalPodAutoscaler (the same rules on the v1 shape; no metric default). */
export const hpaV1Strategy: Strategy = {
  prepareForCreate: (object) => prepareHpa(object, true),
  prepareForUpdate: (object) => prepareHpa(object, true),
};

function preparePdb(object: MutableObject): StatusCause[] {
  const spec = ensureObject(object, 'spec');
  const causes: StatusCause[] = [];
  if (spec.minAvailable !== undefined && spec.maxUnavailable !== undefined)
    causes.push(cause.invalid('spec', spec, 'minAvailable and maxUnavailable cannot be both set'));
  for (const name of ['minAvailable', 'maxUnavailable']) {
    const value = spec[name];
    if (value === undefined) continue;
    if (typeof value === 'number') causes.push(...nonNegative(`spec.${name}`, value));
    else if (typeof value === 'string') {
      const match = /^(\d+)%$/.exec(value);
      if (match === null)
        causes.push(
          cause.invalid(
            `spec.${name}`,
            value,
            "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
          ),
        );
      else if (Number(match[1]) > 100)
        causes.push(cause.invalid(`spec.${name}`, value, 'must not be greater than 100%'));
    }
  }
  const policies = ['IfHealthyBudget', 'AlwaysAllow'];
  if (
    spec.unhealthyPodEvictionPolicy !== undefined &&
    !policies.includes(String(spec.unhealthyPodEvictionPolicy))
  )
    causes.push(
      cause.unsupported('spec.unhealthyPodEvictionPolicy', spec.unhealthyPodEvictionPolicy, policies),
    );
  return causes;
}

/** policy/v1 PodDisruptionBudget: not both minAvailable and maxUnavailable; int or percent. */
export const pdbStrategy: Strategy = {
  prepareForCreate: (object) => preparePdb(object),
  prepareForUpdate: (object) => preparePdb(object),
  validateStatus: (object) => {
    const status = asObject(object.status) ?? {};
    return ['currentHealthy', 'desiredHealthy', 'expectedPods', 'disruptionsAllowed'].flatMap((name) =>
      nonNegative(`status.${name}`, status[name]),
    );
  },
};
