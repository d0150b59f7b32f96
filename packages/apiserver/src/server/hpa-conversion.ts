import type { KubeObject } from '@converge/runtime';
import type { JsonObject, VersionConverter } from './api-resource.ts';
import { asObject } from './json-util.ts';

/**
 * Serves `autoscaling/v1` HorizontalPodAutoscalers as a view of the stored `autoscaling/v2` ones,
 * as kube-apiserver does: a CPU utilization target ↔ `targetCPUUtilizationPercentage`; what v1
 * cannot hold (other metrics, behavior, conditions, current metrics) rides in annotations, so a
 * v1 round trip loses nothing.
 */

const METRICS = 'autoscaling.alpha.kubernetes.io/metrics';
const BEHAVIOR = 'autoscaling.alpha.kubernetes.io/behavior';
const CONDITIONS = 'autoscaling.alpha.kubernetes.io/conditions';
const CURRENT_METRICS = 'autoscaling.alpha.kubernetes.io/current-metrics';

function isCpuUtilization(metric: unknown): boolean {
  const m = asObject(metric);
  const resource = asObject(m?.resource);
  return (
    m?.type === 'Resource' && resource?.name === 'cpu' && asObject(resource.target)?.type === 'Utilization'
  );
}

function parseAnnotation(annotations: JsonObject, key: string): unknown[] | JsonObject | undefined {
  const text = annotations[key];
  delete annotations[key];
  if (typeof text !== 'string') return undefined;
  try {
    return JSON.parse(text) as unknown[] | JsonObject;
  } catch {
    return undefined;
  }
}

function toV1(object: JsonObject): JsonObject {
  const metadata = { ...(asObject(object.metadata) ?? {}) };
  const annotations: JsonObject = { ...(asObject(metadata.annotations) ?? {}) };
  const spec = asObject(object.spec) ?? {};
  const metrics = Array.isArray(spec.metrics) ? spec.metrics : [];
  const cpu = metrics.find(isCpuUtilization);
  const others = metrics.filter((m) => m !== cpu);
  if (others.length > 0) annotations[METRICS] = JSON.stringify(others);
  if (spec.behavior !== undefined) annotations[BEHAVIOR] = JSON.stringify(spec.behavior);
  const outSpec: JsonObject = {};
  for (const key of ['scaleTargetRef', 'minReplicas', 'maxReplicas'])
    if (spec[key] !== undefined) outSpec[key] = spec[key];
  const target = asObject(asObject(asObject(cpu)?.resource)?.target)?.averageUtilization;
  if (target !== undefined) outSpec.targetCPUUtilizationPercentage = target;
  const out: JsonObject = {
    apiVersion: 'autoscaling/v1',
    kind: 'HorizontalPodAutoscaler',
    metadata,
    spec: outSpec,
  };
  const status = asObject(object.status);
  if (status !== undefined) {
    const outStatus: JsonObject = {};
    for (const key of ['observedGeneration', 'lastScaleTime', 'currentReplicas', 'desiredReplicas'])
      if (status[key] !== undefined) outStatus[key] = status[key];
    const current = Array.isArray(status.currentMetrics) ? status.currentMetrics : [];
    const cpuNow = current.find((m) => asObject(asObject(m)?.resource)?.name === 'cpu');
    const utilization = asObject(asObject(asObject(cpuNow)?.resource)?.current)?.averageUtilization;
    if (utilization !== undefined) outStatus.currentCPUUtilizationPercentage = utilization;
    if (current.length > 0) annotations[CURRENT_METRICS] = JSON.stringify(current);
    if (Array.isArray(status.conditions) && status.conditions.length > 0)
      annotations[CONDITIONS] = JSON.stringify(status.conditions);
    outStatus.currentReplicas ??= 0;
    outStatus.desiredReplicas ??= 0;
    out.status = outStatus;
  }
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  else delete metadata.annotations;
  return out;
}

function toV2(object: JsonObject): JsonObject {
  const metadata = { ...(asObject(object.metadata) ?? {}) };
  const annotations: JsonObject = { ...(asObject(metadata.annotations) ?? {}) };
  const spec = asObject(object.spec) ?? {};
  const metrics: unknown[] = [];
  if (typeof spec.targetCPUUtilizationPercentage === 'number')
    metrics.push({
      type: 'Resource',
      resource: {
        name: 'cpu',
        target: { type: 'Utilization', averageUtilization: spec.targetCPUUtilizationPercentage },
      },
    });
  const others = parseAnnotation(annotations, METRICS);
  if (Array.isArray(others)) metrics.push(...others);
  const behavior = parseAnnotation(annotations, BEHAVIOR);
  const outSpec: JsonObject = {};
  for (const key of ['scaleTargetRef', 'minReplicas', 'maxReplicas'])
    if (spec[key] !== undefined) outSpec[key] = spec[key];
  if (metrics.length > 0) outSpec.metrics = metrics;
  if (behavior !== undefined && !Array.isArray(behavior)) outSpec.behavior = behavior;
  const out: JsonObject = {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata,
    spec: outSpec,
  };
  const conditions = parseAnnotation(annotations, CONDITIONS);
  const current = parseAnnotation(annotations, CURRENT_METRICS);
  const status = asObject(object.status);
  if (status !== undefined) {
    const outStatus: JsonObject = {};
    for (const key of ['observedGeneration', 'lastScaleTime', 'currentReplicas', 'desiredReplicas'])
      if (status[key] !== undefined) outStatus[key] = status[key];
    if (Array.isArray(current)) outStatus.currentMetrics = current;
    else if (typeof status.currentCPUUtilizationPercentage === 'number')
      outStatus.currentMetrics = [
        {
          type: 'Resource',
          resource: { name: 'cpu', current: { averageUtilization: status.currentCPUUtilizationPercentage } },
        },
      ];
    if (Array.isArray(conditions)) outStatus.conditions = conditions;
    out.status = outStatus;
  }
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  else delete metadata.annotations;
  return out;
}

/** autoscaling/v1 ↔ the stored autoscaling/v2 HorizontalPodAutoscaler. */
export const hpaV1Converter: VersionConverter = {
  toStorage(object: JsonObject): JsonObject {
    return toV2(object);
  },
  fromStorage(object: KubeObject): JsonObject {
    return toV1(object as unknown as JsonObject);
  },
};
