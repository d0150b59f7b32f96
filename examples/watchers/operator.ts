/**
 * Watchers (grafana app-sdk's operator style): an `InformerController` calls event handlers —
 * add, update, delete, sync — for the `Tenant`s an informer sees, through an `OpinionatedWatcher`
 * that owns a finalizer on every Tenant. Each Tenant gets a "record": a ConfigMap
 * `tenant-<name>` beside it holding its owner and plan. The record has **no owner reference**, so
 * nothing deletes it but the operator: the delete handler must run for every deleted Tenant, also
 * for one deleted while the operator was down. The finalizer makes sure of it: the Tenant stays
 * (Terminating) until the delete handler succeeded.
 *
 * - add (a Tenant the operator has not handled yet): the record is written, and its
 *   `examples.converge.dev/adds` annotation counts the call;
 * - update (the spec changed): the record follows;
 * - sync (a Tenant handled before, seen again when the operator starts): the record is checked
 *   and repaired (written again if it is missing or differs), and `examples.converge.dev/syncs`
 *   counts the call;
 * - delete (the Tenant is being deleted and still carries the finalizer): the record is deleted;
 *   then the watcher removes the finalizer and the Tenant goes.
 */
import {
  type Backend,
  type Client,
  type ConfigMap,
  configMapType,
  createOrUpdate,
  defaultFinalizerSupplier,
  InformerController,
  ignoreNotFound,
  type KubeObject,
  type Manager,
  OpinionatedWatcher,
  opinionatedRetryDequeuePolicy,
  type ResourceType,
  type ResourceWatcher,
  resourceType,
} from '@converge/runtime';

export interface Tenant extends KubeObject {
  readonly spec: { readonly owner: string; readonly plan?: string };
}

export const tenantType: ResourceType<Tenant> = resourceType<Tenant>({
  group: 'examples.converge.dev',
  version: 'v1alpha1',
  kind: 'Tenant',
  plural: 'tenants',
  namespaced: true,
});

/** The finalizer the watcher owns: app-sdk's default, `operator.v1alpha1.Tenant.examples.converge.dev`. */
export const TENANT_FINALIZER = defaultFinalizerSupplier(tenantType);
/** Counts the add calls that wrote a record. */
export const ADDS_ANNOTATION = 'examples.converge.dev/adds';
/** Counts the sync calls that checked a record. */
export const SYNCS_ANNOTATION = 'examples.converge.dev/syncs';
/** Labels every record with its Tenant's name, for `kubectl get cm -l`. */
export const TENANT_LABEL = 'examples.converge.dev/tenant';

/** The name of a Tenant's record. */
export function recordName(tenant: string): string {
  return `tenant-${tenant}`;
}

/**
 * Writes the record of the Tenant `event` is about; `count`, if given, is the annotation whose
 * counter goes up by one. The record follows the Tenant as the cache has it now, not as the call
 * carries it: a call carries its event's Tenant, and a retry the one of its first attempt — an add
 * that failed, retried after an update with a newer spec ran (the opinionated dequeue policy keeps
 * an add's retry through an update), would otherwise write the older spec back over the newer one
 * (found by `operator.scenario.ts`, `npx converge simulate`). A Tenant already gone gets no record.
 */
async function writeRecord(
  client: Client,
  event: Tenant,
  count?: string,
  server?: Pick<Backend, 'get'>,
): Promise<string> {
  const namespace = event.metadata.namespace ?? 'default';
  const name = event.metadata.name ?? '';
  const tenant = await client.get(tenantType, { namespace, name }).catch(ignoreNotFound);
  if (tenant === undefined) return 'unchanged';
  // The cache may show a Tenant deleted since (a restarted process's cache can start behind): a
  // record written for it would never be deleted (no owner reference; its delete handler ran
  // already). Ask the server before writing (found by `operator.scenario.ts`).
  if (server !== undefined) {
    const live = await server.get<Tenant>(tenantType, { namespace, name }).catch(ignoreNotFound);
    if (live === undefined || live.metadata.uid !== tenant.metadata.uid || live.metadata.deletionTimestamp)
      return 'unchanged';
  }
  const skeleton: ConfigMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { namespace, name: recordName(name) },
  };
  const { result } = await createOrUpdate(client, configMapType, skeleton, (cm) => {
    const annotations = { ...cm.metadata.annotations };
    if (count !== undefined) annotations[count] = String(Number(annotations[count] ?? '0') + 1);
    return {
      ...cm,
      metadata: {
        ...cm.metadata,
        labels: { ...cm.metadata.labels, [TENANT_LABEL]: name },
        ...(Object.keys(annotations).length === 0 ? {} : { annotations }),
      },
      data: { tenant: name, owner: tenant.spec.owner, plan: tenant.spec.plan ?? 'free' },
    };
  });
  return result;
}

/** The Tenant handlers, as plain event handlers: the opinionated watcher decides which one runs. */
export function tenantHandlers(client: Client, server?: Pick<Backend, 'get'>): ResourceWatcher<Tenant> {
  return {
    async add(tenant, { logger }) {
      await writeRecord(client, tenant, ADDS_ANNOTATION, server);
      logger.info({ record: recordName(tenant.metadata.name ?? '') }, 'Tenant added: record written');
    },
    async update(_old, tenant, { logger }) {
      const result = await writeRecord(client, tenant, undefined, server);
      logger.info(
        { record: recordName(tenant.metadata.name ?? ''), result },
        'Tenant updated: record follows',
      );
    },
    async sync(tenant, { logger }) {
      const result = await writeRecord(client, tenant, SYNCS_ANNOTATION, server);
      logger.info(
        { record: recordName(tenant.metadata.name ?? ''), result },
        'Tenant synced: record checked',
      );
    },
    async delete(tenant, { logger, signal }) {
      const key = {
        namespace: tenant.metadata.namespace ?? 'default',
        name: recordName(tenant.metadata.name ?? ''),
      };
      await client.delete(configMapType, key, { signal }).catch(ignoreNotFound);
      logger.info({ record: key.name }, 'Tenant deleted: record removed');
    },
  };
}

/** What {@link watchers} wired, for tests and for whoever wants to look inside. */
export interface Watchers {
  readonly controller: InformerController;
  readonly watcher: OpinionatedWatcher<Tenant>;
}

/**
 * Wires the informer controller into `manager`: the Tenant informer comes from the manager's
 * shared informers (which run it), the opinionated watcher writes through the manager's client.
 */
export function watchers(manager: Manager): Watchers {
  const controller = new InformerController({
    name: 'tenants',
    // app-sdk v0.37's default: a new event drops a pending retry only when it makes it moot.
    retryDequeuePolicy: opinionatedRetryDequeuePolicy,
    clock: manager.clock,
    logger: manager.logger,
  });
  const { informer } = manager.informers.acquire<Tenant>({ backend: manager.backend, type: tenantType });
  controller.addInformer(informer, tenantType.kind, { start: false });
  const watcher = new OpinionatedWatcher<Tenant>({
    type: tenantType,
    client: manager.client,
    handlers: tenantHandlers(manager.client, manager.backend),
    clock: manager.clock,
  });
  controller.addWatcher(watcher, tenantType.kind, { name: 'tenant-records' });
  manager.add(controller, { name: 'informer-controller:tenants' });
  return { controller, watcher };
}

/** The operator module: `converge dev` and `converge run` call it with the manager. */
export default function operator(manager: Manager): void {
  watchers(manager);
}
