/**
 * finalizer-order, fixed. The `finalizer` helper: the finalizer goes on before the bucket is made,
 * and comes off only once the cleanup finished — the bucket's delete first, then the finalizer
 * removal. A crash or a lost answer anywhere in between leaves the ConfigMap with its finalizer,
 * and the next reconcile runs the cleanup again (deleting a bucket already gone is fine).
 *
 * And before it makes a bucket it finds missing, the operator records it on the ConfigMap
 * (Crossplane's create-pending annotation) with an update that carries the resourceVersion it read. A process
 * restarted onto a lagging API server replica may see a ConfigMap deleted long ago, still with its
 * finalizer and not yet with its bucket (Sieve's time travel); its update then fails (NotFound, or
 * a conflict) instead of making a bucket nothing would ever delete.
 */
import {
  type ConfigMap,
  configMapType,
  done,
  finalizer,
  ignoreNotFound,
  type Manager,
  secretType,
} from '@converge/runtime';
import { defineScenario } from '@converge/simulation';
import {
  bucketKey,
  bucketSetup,
  FINALIZER,
  noLeakedBuckets,
  WANTS_BUCKET,
} from './finalizer-order.shared.ts';

const PENDING = 'buckets.example.com/create-pending';

export function operator(manager: Manager): void {
  const { client } = manager;
  manager
    .controller(configMapType)
    .named('buckets')
    .complete(async (key) => {
      const request = await client.get(configMapType, key).catch(ignoreNotFound);
      if (request?.metadata.labels?.[WANTS_BUCKET] !== 'yes') return done();
      return finalizer(client, configMapType, FINALIZER, request, async (event) => {
        const where = bucketKey(key);
        if (event.type === 'cleanup') {
          await client.delete(secretType, where).catch(ignoreNotFound);
          return done();
        }
        const owner = event.object;
        const data = { region: Buffer.from(owner.data?.region ?? '').toString('base64') };
        const bucket = await client.get(secretType, where).catch(ignoreNotFound);
        if (bucket === undefined) {
          const pending: ConfigMap = {
            ...owner,
            metadata: {
              ...owner.metadata,
              annotations: { ...owner.metadata.annotations, [PENDING]: where.name },
            },
          };
          await client.update(configMapType, pending);
          await client.create(secretType, { apiVersion: 'v1', kind: 'Secret', metadata: where, data });
        } else if (JSON.stringify(bucket.data) !== JSON.stringify(data)) {
          await client.update(secretType, { ...bucket, data });
        }
        return done();
      });
    });
}

export default defineScenario({
  name: 'finalizer-order (fixed)',
  operator,
  setup: bucketSetup,
  invariants: { 'one bucket per live request, none leaked': noLeakedBuckets },
});
