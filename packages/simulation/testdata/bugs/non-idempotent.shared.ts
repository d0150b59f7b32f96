/**
 * The world of the non-idempotent pair: workloads (ConfigMaps labelled with their team and sized
 * in `data.cpu`) whose sizes a team's usage ConfigMap adds up.
 */
import { type ConfigMap, configMapType } from '@converge/runtime';
import type { InvariantContext, SetupContext } from '@converge/simulation';

export const NAMESPACE = 'default';
export const TEAM = 'quota.example.com/team';
const WORKLOADS: readonly (readonly [string, string, number])[] = [
  ['checkout', 'shop', 2],
  ['cart', 'shop', 1],
  ['search', 'shop', 4],
  ['ingest', 'data', 8],
  ['etl', 'data', 3],
  ['reports', 'data', 1],
];

/** The name of a team's usage ConfigMap. */
export function usageName(team: string): string {
  return `${team}-usage`;
}

function workload(name: string, team: string, cpu: number): ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { namespace: NAMESPACE, name, labels: { [TEAM]: team } },
    data: { cpu: String(cpu) },
  };
}

/** Six workloads of two teams, one every 400 ms. */
export async function workloadSetup({ client, sleep }: SetupContext): Promise<void> {
  await sleep(500);
  for (const [name, team, cpu] of WORKLOADS) {
    await client.create(configMapType, workload(name, team, cpu));
    await sleep(400);
  }
}

/** Each team's usage is the sum of its workloads' cpu. */
export async function usageAddsUp({ client }: InvariantContext): Promise<void> {
  for (const team of ['shop', 'data']) {
    const want = WORKLOADS.filter(([, t]) => t === team).reduce((sum, [, , cpu]) => sum + cpu, 0);
    const usage = await client.get(configMapType, { namespace: NAMESPACE, name: usageName(team) });
    if (usage.data?.cpu !== String(want))
      throw new Error(
        `team ${team} uses ${usage.data?.cpu} cpu by its usage ConfigMap, ${want} by its workloads`,
      );
  }
}
