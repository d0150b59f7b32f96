import type { StatusCause } from '@converge/runtime';
import { matchConditionCauses } from '../admission/index.ts';
import type { JsonObject, MutableObject, Strategy } from './api-resource.ts';
import { cause } from './field-causes.ts';
import { asObject, ensureObject, getPath, setDefault } from './json-util.ts';
import { defaultPodSpec } from './strategies-core.ts';
import { immutable, labelSelector, nonNegative, selectorMatches } from './strategy-rules.ts';

/** Go's `%v` of a `map[string]string`, as validation messages print labels. */
export function goMap(map: JsonObject): string {
  const entries = Object.keys(map)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${JSON.stringify(map[k])}`);
  return `map[string]string{${entries.join(', ')}}`;
}

/**
 * A workload's selector must exist, be non-empty (`empty selector is invalid for <noun>`) and
 * match its pod template's labels.
 */
export function selectorCauses(spec: JsonObject, noun = 'deployment'): StatusCause[] {
  const selector = asObject(spec.selector);
  if (selector === undefined) return [cause.required('spec.selector')];
  const matchLabels = asObject(selector.matchLabels) ?? {};
  const expressions = Array.isArray(selector.matchExpressions) ? selector.matchExpressions : [];
  if (Object.keys(matchLabels).length === 0 && expressions.length === 0) {
    return [cause.invalid('spec.selector', selector, `empty selector is invalid for ${noun}`)];
  }
  const invalid = labelSelector('spec.selector', selector);
  if (invalid.length > 0) return invalid;
  const template = asObject(spec.template);
  const labels = asObject(asObject(template?.metadata)?.labels) ?? {};
  if (!selectorMatches(selector, labels)) {
    return [
      cause.invalid(
        'spec.template.metadata.labels',
        goMap(labels),
        '`selector` does not match template `labels`',
      ),
    ];
  }
  return [];
}

/** The pod template's spec defaults and required fields (`spec.template` by default). */
export function templateCauses(spec: JsonObject, restartPolicy = 'Always'): StatusCause[] {
  const template = asObject(spec.template);
  if (template === undefined) return [cause.required('spec.template')];
  return defaultPodSpec(ensureObject(template, 'spec'), 'spec.template.spec', restartPolicy);
}

function replicasCauses(spec: JsonObject): StatusCause[] {
  const replicas = spec.replicas;
  if (typeof replicas !== 'number' || !Number.isSafeInteger(replicas) || replicas < 0) {
    return [cause.invalid('spec.replicas', replicas, 'must be greater than or equal to 0')];
  }
  return [];
}

function workload(noun: string, defaults: (spec: JsonObject) => void): Strategy {
  const prepare = (object: MutableObject): StatusCause[] => {
    const spec = ensureObject(object, 'spec');
    setDefault(spec, 'replicas', 1);
    setDefault(spec, 'revisionHistoryLimit', 10);
    defaults(spec);
    return [...replicasCauses(spec), ...selectorCauses(spec, noun), ...templateCauses(spec)];
  };
  return {
    prepareForCreate: prepare,
    prepareForUpdate: (object, old) => [
      ...prepare(object),
      // apps/v1: the selector never changes
      ...immutable('spec.selector', asObject(object.spec)?.selector, getPath(old, 'spec.selector')),
    ],
  };
}

/** apps/v1 Deployment: replicas 1, RollingUpdate 25 %/25 %, progress deadline 600 s; selector checks. */
export const deploymentStrategy: Strategy = workload('deployment', (spec) => {
  setDefault(spec, 'progressDeadlineSeconds', 600);
  const strategy = ensureObject(spec, 'strategy');
  setDefault(strategy, 'type', 'RollingUpdate');
  if (strategy.type === 'RollingUpdate') {
    const rolling = ensureObject(strategy, 'rollingUpdate');
    setDefault(rolling, 'maxUnavailable', '25%');
    setDefault(rolling, 'maxSurge', '25%');
  }
});

/** apps/v1 ReplicaSet: replicas 1; selector checks. */
export const replicaSetStrategy: Strategy = workload('replicaset', () => undefined);

/** apps/v1 StatefulSet: replicas 1, OrderedReady, RollingUpdate partition 0, Retain PVCs. */
const statefulSetBase: Strategy = workload('statefulset', (spec) => {
  setDefault(spec, 'podManagementPolicy', 'OrderedReady');
  const update = ensureObject(spec, 'updateStrategy');
  setDefault(update, 'type', 'RollingUpdate');
  if (update.type === 'RollingUpdate') setDefault(ensureObject(update, 'rollingUpdate'), 'partition', 0);
  const retention = ensureObject(spec, 'persistentVolumeClaimRetentionPolicy');
  setDefault(retention, 'whenDeleted', 'Retain');
  setDefault(retention, 'whenScaled', 'Retain');
});

/** The StatefulSet spec fields an update may change (`ValidateStatefulSetUpdate`). */
const STATEFUL_SET_MUTABLE = [
  'replicas',
  'ordinals',
  'template',
  'updateStrategy',
  'persistentVolumeClaimRetentionPolicy',
  'minReadySeconds',
];

/** apps/v1 StatefulSet: replicas 1, OrderedReady, RollingUpdate partition 0, Retain PVCs; most of the spec fixed. */
export const statefulSetStrategy: Strategy = {
  prepareForCreate: (object, context) => statefulSetBase.prepareForCreate?.(object, context),
  prepareForUpdate(object, old, context) {
    // the selector is covered by the rule below, worded as upstream words it
    const causes = (statefulSetBase.prepareForUpdate?.(object, old, context) ?? []).filter(
      (c) => c.field !== 'spec.selector' || !c.message.endsWith('field is immutable'),
    );
    const spec = { ...(asObject(object.spec) ?? {}) };
    const previous = { ...(asObject(getPath(old, 'spec')) ?? {}) };
    for (const field of STATEFUL_SET_MUTABLE) {
      delete spec[field];
      delete previous[field];
    }
    if (JSON.stringify(spec) !== JSON.stringify(previous) && !sameKeysAndValues(spec, previous))
      causes.push(
        cause.forbidden(
          'spec',
          "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        ),
      );
    return causes;
  },
};

/** Deep equality regardless of key order. */
function sameKeysAndValues(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => sameKeysAndValues(item, b[i]));
  }
  const x = asObject(a);
  const y = asObject(b);
  if (x === undefined || y === undefined) return a === b;
  const keys = Object.keys(x);
  if (keys.length !== Object.keys(y).length) return false;
  return keys.every((key) => Object.hasOwn(y, key) && sameKeysAndValues(x[key], y[key]));
}

/**
 * A Job spec's defaults and rules (also a CronJob's `jobTemplate.spec`, with `defaults` false: the
 * Job defaults apply when the Job is created). `field` is where the spec is.
 */
export function jobSpecCauses(spec: JsonObject, field: string, defaults: boolean): StatusCause[] {
  if (defaults) {
    if (spec.parallelism === undefined && spec.completions === undefined) spec.completions = 1;
    setDefault(spec, 'parallelism', 1);
    setDefault(spec, 'backoffLimit', 6);
    setDefault(spec, 'completionMode', 'NonIndexed');
    setDefault(spec, 'suspend', false);
    setDefault(spec, 'podReplacementPolicy', 'TerminatingOrFailed');
  }
  const template = asObject(spec.template);
  if (template === undefined) return [cause.required(`${field}.template`)];
  const causes = defaultPodSpec(ensureObject(template, 'spec'), `${field}.template.spec`);
  const policy = asObject(template.spec)?.restartPolicy;
  if (policy !== 'Never' && policy !== 'OnFailure') {
    causes.push(cause.required(`${field}.template.spec.restartPolicy`, 'valid values: "OnFailure", "Never"'));
  }
  for (const name of ['parallelism', 'completions', 'backoffLimit', 'activeDeadlineSeconds'])
    causes.push(...nonNegative(`${field}.${name}`, spec[name]));
  return causes;
}

/** batch/v1 Job: parallelism/completions 1, backoffLimit 6, NonIndexed; restartPolicy Never|OnFailure. */
export const jobStrategy: Strategy = {
  prepareForCreate(object) {
    return jobSpecCauses(ensureObject(object, 'spec'), 'spec', true);
  },
  prepareForUpdate(object, old) {
    const spec = ensureObject(object, 'spec');
    const causes = jobSpecCauses(spec, 'spec', true);
    const previous = asObject(getPath(old, 'spec')) ?? {};
    causes.push(...immutable('spec.selector', spec.selector, previous.selector));
    causes.push(...immutable('spec.completionMode', spec.completionMode, previous.completionMode));
    if (spec.completionMode !== 'Indexed')
      causes.push(...immutable('spec.completions', spec.completions, previous.completions));
    // the template may change only while the job is suspended and has not started
    if (!(previous.suspend === true && getPath(old, 'status.startTime') === undefined))
      causes.push(...immutable('spec.template', spec.template, previous.template));
    return causes;
  },
};

function webhookDefaults(mutating: boolean): Strategy {
  const prepare = (object: MutableObject): StatusCause[] => {
    const causes: StatusCause[] = [];
    const webhooks = Array.isArray(object.webhooks) ? object.webhooks : [];
    webhooks.forEach((item, i) => {
      const hook = asObject(item);
      if (hook === undefined) return;
      if (typeof hook.name !== 'string' || hook.name === '')
        causes.push(cause.required(`webhooks[${i}].name`));
      setDefault(hook, 'failurePolicy', 'Fail');
      setDefault(hook, 'matchPolicy', 'Equivalent');
      setDefault(hook, 'timeoutSeconds', 10);
      setDefault(hook, 'namespaceSelector', {});
      setDefault(hook, 'objectSelector', {});
      if (mutating) setDefault(hook, 'reinvocationPolicy', 'Never');
      for (const rule of Array.isArray(hook.rules) ? hook.rules : []) {
        const r = asObject(rule);
        if (r !== undefined) setDefault(r, 'scope', '*');
      }
      const sideEffects = hook.sideEffects;
      if (sideEffects !== 'None' && sideEffects !== 'NoneOnDryRun') {
        causes.push(
          cause.unsupported(`webhooks[${i}].sideEffects`, sideEffects ?? '', ['None', 'NoneOnDryRun']),
        );
      }
      const versions = hook.admissionReviewVersions;
      if (!Array.isArray(versions) || !versions.includes('v1')) {
        causes.push(
          cause.required(`webhooks[${i}].admissionReviewVersions`, 'must specify one of v1, v1beta1'),
        );
      }
      causes.push(...matchConditionCauses(hook, `webhooks[${i}]`));
    });
    return causes;
  };
  return { prepareForCreate: prepare, prepareForUpdate: prepare };
}

/** admissionregistration.k8s.io/v1 MutatingWebhookConfiguration defaults and required fields. */
export const mutatingWebhookStrategy: Strategy = webhookDefaults(true);
/** admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration defaults and required fields. */
export const validatingWebhookStrategy: Strategy = webhookDefaults(false);
