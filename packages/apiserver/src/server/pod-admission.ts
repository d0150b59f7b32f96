import { ForbiddenError, isNotFound, type KubeObject } from '@converge/runtime';
import type { JsonObject, MutableObject } from './api-resource.ts';
import type { RequestContext } from './context.ts';
import { asObject, ensureObject } from './json-util.ts';

/** Where the ServiceAccount admission plugin mounts the API credentials in every container. */
export const SERVICE_ACCOUNT_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
/** The prefix of the projected volume's name (`kube-api-access-` and five random characters). */
const TOKEN_VOLUME_PREFIX = 'kube-api-access-';
/** apimachinery's `utilrand.String` alphabet: no vowels, no look-alike digits. */
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
/** The `WarnOnlyBoundTokenExpirationSeconds` of the projected token (1 h + 7 s). */
const TOKEN_EXPIRATION_SECONDS = 3607;
/** What the DefaultTolerationSeconds plugin gives pods that do not tolerate these taints already. */
const DEFAULT_TOLERATION_SECONDS = 300;
const NO_EXECUTE_TAINTS = ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'] as const;

/**
 * The classes kube-apiserver's scheduling post-start hook always creates; used when the store has
 * no object of that name (Converge does not create them).
 */
const SYSTEM_PRIORITY_CLASSES: Readonly<Record<string, JsonObject>> = {
  'system-node-critical': { value: 2_000_001_000, preemptionPolicy: 'PreemptLowerPriority' },
  'system-cluster-critical': { value: 2_000_000_000, preemptionPolicy: 'PreemptLowerPriority' },
};

/** Whether this write is to core/v1 pods itself (the plugins skip subresources). */
function isPodWrite(ctx: RequestContext): boolean {
  const { resource, target } = ctx;
  return resource.group === '' && resource.plural === 'pods' && target.subresource === undefined;
}

/** `admission.NewForbidden` for pods: `pods "<name>" is forbidden: <reason>` (403). */
function forbidden(object: MutableObject, reason: string): ForbiddenError {
  const name = typeof object.metadata.name === 'string' ? object.metadata.name : '';
  const subject = name === '' ? 'pods' : `pods ${JSON.stringify(name)}`;
  return new ForbiddenError(`${subject} is forbidden: ${reason}`, {
    details: { name, group: '', kind: 'pods' },
  });
}

async function getOptional(
  ctx: RequestContext,
  version: string,
  group: string,
  plural: string,
  namespace: string,
  name: string,
): Promise<KubeObject | undefined> {
  const type = ctx.server.registry.lookup(group, version, plural);
  if (type === undefined) return undefined;
  try {
    return await ctx.server.store.get(type.storage, { namespace, name });
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** The projected volume kube-apiserver 1.32 mounts: bound token, cluster CA, namespace. */
function tokenVolume(name: string): JsonObject {
  return {
    name,
    projected: {
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: TOKEN_EXPIRATION_SECONDS, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        {
          downwardAPI: {
            items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
          },
        },
      ],
    },
  };
}

function objects(value: unknown): JsonObject[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item: unknown) => {
    const object = asObject(item);
    return object === undefined ? [] : [object];
  });
}

/**
 * The ServiceAccount plugin's `mountServiceAccountToken`: every init and app container without a
 * mount at the credentials path gets one of the `kube-api-access-*` volume, added when needed.
 */
function mountToken(ctx: RequestContext, spec: JsonObject): void {
  const existing = objects(spec.volumes).find(
    (v) => typeof v.name === 'string' && v.name.startsWith(TOKEN_VOLUME_PREFIX),
  );
  let name = existing?.name as string | undefined;
  if (name === undefined) {
    name = TOKEN_VOLUME_PREFIX;
    for (let i = 0; i < 5; i++) {
      name += NAME_ALPHABET[Math.floor(ctx.server.clock.random() * NAME_ALPHABET.length)];
    }
  }
  let needed = false;
  for (const container of [...objects(spec.initContainers), ...objects(spec.containers)]) {
    const mounts = Array.isArray(container.volumeMounts) ? container.volumeMounts : [];
    if (objects(mounts).some((m) => m.mountPath === SERVICE_ACCOUNT_MOUNT_PATH)) continue;
    container.volumeMounts = [...mounts, { name, readOnly: true, mountPath: SERVICE_ACCOUNT_MOUNT_PATH }];
    needed = true;
  }
  if (existing === undefined && needed) {
    spec.volumes = [...(Array.isArray(spec.volumes) ? spec.volumes : []), tokenVolume(name)];
  }
}

/**
 * The ServiceAccount plugin on create: `serviceAccountName` defaults to `default`; a pod without
 * `imagePullSecrets` gets its ServiceAccount's; the token is mounted unless the pod (or else its
 * ServiceAccount) sets `automountServiceAccountToken: false`. Mirror pods are left alone. Unlike
 * kube-apiserver, a missing ServiceAccount is not refused (the embedded server may run without
 * per-namespace default ServiceAccounts).
 */
async function admitServiceAccount(
  ctx: RequestContext,
  object: MutableObject,
  spec: JsonObject,
): Promise<void> {
  if (asObject(object.metadata.annotations)?.['kubernetes.io/config.mirror'] !== undefined) return;
  const accountName =
    typeof spec.serviceAccountName === 'string' && spec.serviceAccountName !== ''
      ? spec.serviceAccountName
      : 'default';
  spec.serviceAccountName = accountName;
  const namespace = String(object.metadata.namespace ?? ctx.target.namespace);
  const account = await getOptional(ctx, 'v1', '', 'serviceaccounts', namespace, accountName);
  const sa = account as unknown as JsonObject | undefined;
  const pullSecrets = objects(sa?.imagePullSecrets);
  if (objects(spec.imagePullSecrets).length === 0 && pullSecrets.length > 0) {
    spec.imagePullSecrets = pullSecrets.map((ref) => ({ name: ref.name }));
  }
  const fromAccount = sa?.automountServiceAccountToken;
  const automount =
    typeof spec.automountServiceAccountToken === 'boolean' ? spec.automountServiceAccountToken : fromAccount;
  if (automount !== false) mountToken(ctx, spec);
}

/** DefaultTolerationSeconds: NoExecute tolerations of not-ready and unreachable nodes for 300 s. */
function admitTolerations(spec: JsonObject): void {
  const tolerations = objects(spec.tolerations);
  const added = NO_EXECUTE_TAINTS.filter(
    (key) => !tolerations.some((t) => (t.key === key || !t.key) && (t.effect === 'NoExecute' || !t.effect)),
  ).map((key) => ({
    key,
    operator: 'Exists',
    effect: 'NoExecute',
    tolerationSeconds: DEFAULT_TOLERATION_SECONDS,
  }));
  if (added.length > 0)
    spec.tolerations = [...(Array.isArray(spec.tolerations) ? spec.tolerations : []), ...added];
}

/**
 * Priority on create: the value of `priorityClassName` (403 when there is no such class), or of
 * the global default class, else 0 with `preemptionPolicy: PreemptLowerPriority`; a `priority`
 * or `preemptionPolicy` in the pod that differs is refused.
 */
async function admitPriority(ctx: RequestContext, object: MutableObject, spec: JsonObject): Promise<void> {
  let value = 0;
  let policy: unknown = 'PreemptLowerPriority';
  const className = typeof spec.priorityClassName === 'string' ? spec.priorityClassName : '';
  if (className === '') {
    const type = ctx.server.registry.lookup('scheduling.k8s.io', 'v1', 'priorityclasses');
    const classes = type === undefined ? [] : (await ctx.server.store.list(type.storage)).items;
    const defaults = classes
      .map((c) => c as unknown as JsonObject)
      .filter((c) => c.globalDefault === true)
      .sort((a, b) => Number(a.value) - Number(b.value));
    const chosen = defaults[0];
    if (chosen !== undefined) {
      spec.priorityClassName = asObject(chosen.metadata)?.name;
      value = Number(chosen.value ?? 0);
      policy = chosen.preemptionPolicy;
    }
  } else {
    const found = await getOptional(ctx, 'v1', 'scheduling.k8s.io', 'priorityclasses', '', className);
    const pc = (found as unknown as JsonObject | undefined) ?? SYSTEM_PRIORITY_CLASSES[className];
    if (pc === undefined) throw forbidden(object, `no PriorityClass with name ${className} was found`);
    value = Number(pc.value ?? 0);
    policy = pc.preemptionPolicy;
  }
  if (typeof spec.priority === 'number' && spec.priority !== value) {
    throw forbidden(
      object,
      `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${value} from the given PriorityClass name`,
    );
  }
  spec.priority = value;
  if (typeof policy !== 'string') return;
  if (typeof spec.preemptionPolicy === 'string' && spec.preemptionPolicy !== policy) {
    throw forbidden(
      object,
      `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`,
    );
  }
  spec.preemptionPolicy = policy;
}

/**
 * The mutating admission plugins kube-apiserver enables by default that change Pods, in its
 * order (ServiceAccount, DefaultTolerationSeconds, Priority), before admission webhooks. On
 * update only what upstream does then: tolerations again, priority kept from the stored pod.
 */
export async function admitPodBuiltins(
  ctx: RequestContext,
  object: MutableObject,
  old: KubeObject | undefined,
): Promise<void> {
  if (!isPodWrite(ctx)) return;
  const spec = ensureObject(object, 'spec');
  if (old === undefined) {
    await admitServiceAccount(ctx, object, spec);
    admitTolerations(spec);
    await admitPriority(ctx, object, spec);
    return;
  }
  admitTolerations(spec);
  const previous = asObject((old as unknown as JsonObject).spec) ?? {};
  if (spec.priority === undefined && previous.priority !== undefined) spec.priority = previous.priority;
  if (spec.preemptionPolicy === undefined && previous.preemptionPolicy !== undefined) {
    spec.preemptionPolicy = previous.preemptionPolicy;
  }
}
