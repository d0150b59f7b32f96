/**
 * non-idempotent, fixed. The usage is derived, not accumulated: every reconcile recomputes the
 * team's total from the workloads it lists now and writes that (`createOrUpdate`, which writes
 * nothing when the total is already right). Running it twice, or after a lost answer, gives the
 * same total; a workload that changes or goes away is accounted for as well.
 */
import { configMapType, createOrUpdate, done, ignoreNotFound, type Manager } from '@converge/runtime';
import { defineScenario } from '@converge/simulation';
import { TEAM, usageName, workloadSetup } from './non-idempotent.shared.ts';

export function operator(manager: Manager): void {
  const { client } = manager;
  manager
    .controller(configMapType)
    .named('usage')
    .complete(async (key) => {
      const workload = await client.get(configMapType, key).catch(ignoreNotFound);
      const team = workload?.metadata.labels?.[TEAM];
      if (team === undefined) return done();
      const workloads = await client.list(configMapType, {
        namespace: key.namespace,
        labelSelector: `${TEAM}=${team}`,
      });
      const total = workloads.reduce((sum, w) => sum + Number(w.data?.cpu ?? 0), 0);
      await createOrUpdate(
        client,
        configMapType,
        { metadata: { namespace: key.namespace, name: usageName(team) } },
        (usage) => ({ ...usage, data: { ...usage.data, cpu: String(total) } }),
      );
      return done();
    });
}

export default defineScenario({
  name: 'non-idempotent (fixed)',
  operator,
  setup: workloadSetup,
});
