/**
 * Prints one line per seed: the seed and the sha256 of its trace, for the copier scenario with
 * every fault and two replicas. `node-versions.test.ts` runs it on two Node versions and compares.
 */
import { createHash } from 'node:crypto';
import { configMapType } from '@converge/runtime';
import { defineScenario, simulate } from '@converge/simulation';
import { copier } from '../src/copier-test-support.ts';

const scenario = defineScenario({
  name: 'digest',
  operator: copier,
  setup: async ({ client, sleep, random }) => {
    for (let i = 0; i < 8; i++) {
      await client.create(configMapType, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `cm-${i}`, namespace: 'default', labels: { copy: 'yes' } },
        data: { v: String(Math.floor(random() * 100)) },
      });
      await sleep(100);
    }
    await client.delete(configMapType, { namespace: 'default', name: 'cm-0' });
  },
});

const seeds = Number(process.argv[2] ?? 20);
for (const replicas of [1, 2]) {
  await simulate(scenario, {
    seeds,
    replicas,
    shrink: false,
    stopOnFailure: false,
    onSeed: (o) => {
      const digest = createHash('sha256').update(o.trace.join('\n')).digest('hex');
      console.log(
        `replicas=${replicas} seed=${o.seed} lines=${o.trace.length} ${o.violation?.name ?? 'ok'} ${digest}`,
      );
    },
  });
}
