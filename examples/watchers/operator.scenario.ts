/**
 * The watchers example under simulation (`npx converge simulate
 * examples/watchers/operator.scenario.ts`): the user creates Tenants, changes one's plan, deletes
 * one's record by hand and deletes a Tenant, while the simulator injects faults (a crash is the
 * operator stopped and started again: its sync handler runs). Once things settle, every Tenant
 * carries the watcher's finalizer and has a record matching its spec (the one never deleted by
 * hand counts at least one add call); the deleted Tenant is gone, and so is its record (no owner
 * reference: only the delete handler removes it).
 *
 * The operator is the module's default export, `watchers(manager)`, unchanged: the simulator waits
 * for its InformerController's running, queued and retried handler calls before it calls the
 * system quiescent.
 */
import { type ConfigMap, configMapType, ignoreNotFound } from '@converge/runtime';
import { defineScenario } from '@converge/simulation';
import {
  ADDS_ANNOTATION,
  recordName,
  TENANT_FINALIZER,
  TENANT_LABEL,
  type Tenant,
  tenantType,
  watchers,
} from './operator.ts';

const namespace = 'default';

const tenant = (name: string, spec: Tenant['spec']): Tenant => ({
  apiVersion: 'examples.converge.dev/v1alpha1',
  kind: 'Tenant',
  metadata: { name, namespace },
  spec,
});

const kept = ['acme', 'globex'];

export default defineScenario({
  name: 'watchers',
  operator: watchers,
  setup: async ({ client, sleep }) => {
    await client.create(tenantType, tenant('acme', { owner: 'wile@acme.example', plan: 'team' }));
    await client.create(tenantType, tenant('globex', { owner: 'hank@globex.example' }));
    await client.create(tenantType, tenant('initech', { owner: 'bill@initech.example', plan: 'free' }));
    await sleep(500);
    await client.patch(
      tenantType,
      { namespace, name: 'acme' },
      { type: 'merge', patch: { spec: { plan: 'enterprise' } } },
    );
    // A record deleted by hand is written again (by the next update or sync).
    await client.delete(configMapType, { namespace, name: recordName('globex') }).catch(ignoreNotFound);
    await client.patch(
      tenantType,
      { namespace, name: 'globex' },
      { type: 'merge', patch: { spec: { plan: 'team' } } },
    );
    await sleep(300);
    await client.delete(tenantType, { namespace, name: 'initech' });
  },
  // The records count handler calls (the adds and syncs annotations). Handlers run at least once: a
  // crash between an add's write and the finalizer it adds runs add again, every restart runs sync,
  // and a record deleted by hand before or after the first add is counted differently. So the final
  // state legitimately depends on the faults and their timing: no differential comparison. What the
  // example promises (records match their Tenants, finalizers, deletes) is checked below instead.
  differential: false,
  invariants: {
    'every Tenant carries the finalizer and a record matching its spec': async ({ client }) => {
      for (const name of kept) {
        const t = await client.get<Tenant>(tenantType, { namespace, name });
        if (!t.metadata.finalizers?.includes(TENANT_FINALIZER))
          throw new Error(`${name} has finalizers ${JSON.stringify(t.metadata.finalizers)}`);
        const record = await client.get<ConfigMap>(configMapType, { namespace, name: recordName(name) });
        const wanted = { tenant: name, owner: t.spec.owner, plan: t.spec.plan ?? 'free' };
        if (JSON.stringify(record.data) !== JSON.stringify(wanted))
          throw new Error(
            `${recordName(name)} holds ${JSON.stringify(record.data)}, wants ${JSON.stringify(wanted)}`,
          );
        if (record.metadata.labels?.[TENANT_LABEL] !== name)
          throw new Error(`${recordName(name)} is labelled ${JSON.stringify(record.metadata.labels)}`);
        // globex's record was deleted by hand, and written again by update or sync: not by add.
        if (name === 'acme' && Number(record.metadata.annotations?.[ADDS_ANNOTATION] ?? 0) < 1)
          throw new Error(
            `${recordName(name)} was never added: ${JSON.stringify(record.metadata.annotations)}`,
          );
      }
    },
    'a deleted Tenant is gone, and so is its record': async ({ client }) => {
      if ((await client.get(tenantType, { namespace, name: 'initech' }).catch(ignoreNotFound)) !== undefined)
        throw new Error('initech still exists');
      const record = await client
        .get(configMapType, { namespace, name: recordName('initech') })
        .catch(ignoreNotFound);
      if (record !== undefined) throw new Error(`${recordName('initech')} is left behind`);
    },
  },
});
