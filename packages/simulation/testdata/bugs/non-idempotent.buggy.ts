/**
 * non-idempotent, buggy. Each workload (a ConfigMap labelled `quota.example.com/team`) is added to
 * its team's usage ConfigMap once: the operator adds the workload's cpu to the running total, then
 * marks the workload counted. Two writes, and the first is not idempotent: when the mark fails
 * (409 because the workload changed meanwhile, a 5xx), or the add applied but its answer was lost
 * (504), or the process died in between, the retry adds the same cpu again.
 *
 * The scenario has no invariant: the differential oracle catches it (the state reached with faults
 * differs from the state the same seed's actions reach without them).
 */
import { type ConfigMap, configMapType, done, ignoreNotFound, type Manager } from '@converge/runtime';
import { defineScenario } from '@converge/simulation';
import { TEAM, usageName, workloadSetup } from './non-idempotent.shared.ts';

const COUNTED = 'quota.example.com/counted';

export function operator(manager: Manager): void {
  const { client } = manager;
  manager
    .controller(configMapType)
    .named('usage')
    .complete(async (key) => {
      const workload = await client.get(configMapType, key).catch(ignoreNotFound);
      const team = workload?.metadata.labels?.[TEAM];
      if (workload === undefined || team === undefined) return done();
      if (workload.metadata.annotations?.[COUNTED] === 'true') return done();
      const cpu = Number(workload.data?.cpu ?? 0);
      const usageKey = { namespace: key.namespace, name: usageName(team) };
      const usage = await client.get(configMapType, usageKey).catch(ignoreNotFound);
      // BUG: "add mine to the total" is right once; a retry of this reconcile does it again.
      if (usage === undefined) {
        const fresh: ConfigMap = {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: usageKey,
          data: { cpu: String(cpu) },
        };
        await client.create(configMapType, fresh);
      } else {
        const total = Number(usage.data?.cpu ?? 0) + cpu;
        await client.update(configMapType, { ...usage, data: { ...usage.data, cpu: String(total) } });
      }
      await client.update(configMapType, {
        ...workload,
        metadata: {
          ...workload.metadata,
          annotations: { ...workload.metadata.annotations, [COUNTED]: 'true' },
        },
      });
      return done();
    });
}

export default defineScenario({
  name: 'non-idempotent (buggy)',
  operator,
  setup: workloadSetup,
});
