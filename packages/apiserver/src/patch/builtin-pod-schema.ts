import type { JsonScalar } from './json.ts';
import type { ListSchema, MapSchema, PatchSchema, StructSchema } from './schema.ts';

/*
 * Patch metadata of the shared parts of built-in kinds: ObjectMeta, LabelSelector, the pod template.
 * Written from the `patchStrategy`/`patchMergeKey` struct tags and `+listType`/`+listMapKey`/
 * `+structType`/`+mapType` markers of k8s.io/api 1.32 and k8s.io/apimachinery meta/v1. Only nodes
 * that differ from the defaults (open struct, list replaced by SMP and atomic for apply) are listed.
 */

/** A struct with the given described fields. */
export function struct(
  fields: Record<string, PatchSchema> = {},
  options: { atomic?: boolean } = {},
): StructSchema {
  return options.atomic === true ? { type: 'struct', fields, atomic: true } : { type: 'struct', fields };
}

/** A map with arbitrary keys. */
export function map(options: { atomic?: boolean; values?: PatchSchema } = {}): MapSchema {
  const schema: { -readonly [K in keyof MapSchema]: MapSchema[K] } = { type: 'map' };
  if (options.atomic === true) schema.atomic = true;
  if (options.values !== undefined) schema.values = options.values;
  return schema;
}

/**
 * A list of objects merged by `mergeKey` by strategic merge patch and keyed by `keys` (default: the
 * merge key) for server-side apply.
 */
export function keyedList(
  mergeKey: string,
  items: PatchSchema = struct(),
  options: { keys?: readonly string[]; keyDefaults?: Record<string, JsonScalar>; applyAtomic?: boolean } = {},
): ListSchema {
  const schema: { -readonly [K in keyof ListSchema]: ListSchema[K] } = {
    type: 'list',
    patchStrategy: 'merge',
    patchMergeKey: mergeKey,
    items,
  };
  if (options.applyAtomic === true) schema.listType = 'atomic';
  else {
    schema.listType = 'map';
    schema.listMapKeys = options.keys ?? [mergeKey];
  }
  if (options.keyDefaults !== undefined) schema.keyDefaults = options.keyDefaults;
  return schema;
}

/** A list of objects patched as a whole by SMP and keyed by `keys` for server-side apply. */
export function applyKeyedList(keys: readonly string[], items: PatchSchema = struct()): ListSchema {
  return { type: 'list', listType: 'map', listMapKeys: keys, items };
}

/** A list of primitives unioned by SMP and a set for server-side apply (finalizers). */
export const primitiveSet: ListSchema = { type: 'list', patchStrategy: 'merge', listType: 'set' };

/** metav1.ObjectMeta. */
export const objectMeta: StructSchema = struct({
  labels: map(),
  annotations: map(),
  finalizers: primitiveSet,
  ownerReferences: keyedList('uid', struct({}, { atomic: true })),
});

/** metav1.LabelSelector (`+structType=atomic`). */
export const labelSelector: StructSchema = struct({}, { atomic: true });

/** `metav1.Condition`-style status conditions: merged by `type`. */
export const conditions: ListSchema = keyedList('type');

const atomicRef = struct({}, { atomic: true });

const container: StructSchema = struct({
  ports: keyedList('containerPort', struct(), {
    keys: ['containerPort', 'protocol'],
    keyDefaults: { protocol: 'TCP' },
  }),
  env: keyedList(
    'name',
    struct({
      valueFrom: struct({
        fieldRef: atomicRef,
        resourceFieldRef: atomicRef,
        configMapKeyRef: atomicRef,
        secretKeyRef: atomicRef,
      }),
    }),
  ),
  volumeMounts: keyedList('mountPath'),
  volumeDevices: keyedList('devicePath'),
  resources: struct({ limits: map(), requests: map(), claims: applyKeyedList(['name']) }),
});

/** core/v1 PodSpec. */
export const podSpec: StructSchema = struct({
  containers: keyedList('name', container),
  initContainers: keyedList('name', container),
  ephemeralContainers: keyedList('name', container),
  volumes: keyedList('name'),
  imagePullSecrets: keyedList('name', atomicRef),
  hostAliases: keyedList('ip'),
  nodeSelector: map({ atomic: true }),
  topologySpreadConstraints: keyedList('topologyKey', struct({ labelSelector }), {
    keys: ['topologyKey', 'whenUnsatisfiable'],
  }),
  schedulingGates: keyedList('name'),
  resourceClaims: keyedList('name'),
  affinity: struct({
    nodeAffinity: struct({ requiredDuringSchedulingIgnoredDuringExecution: struct({}, { atomic: true }) }),
  }),
  overhead: map(),
});

/** core/v1 PodTemplateSpec. */
export const podTemplate: StructSchema = struct({ metadata: objectMeta, spec: podSpec });

/** core/v1 PodStatus. */
export const podStatus: StructSchema = struct({
  conditions,
  podIPs: keyedList('ip'),
  hostIPs: keyedList('ip', struct(), { applyAtomic: true }),
  resourceClaimStatuses: keyedList('name'),
});
