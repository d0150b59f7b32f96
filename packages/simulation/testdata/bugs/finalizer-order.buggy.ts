/**
 * finalizer-order, buggy. A ConfigMap labelled `buckets.example.com/bucket: "yes"` gets a bucket
 * (a Secret in the `buckets` namespace, standing for something outside the cluster), guarded by a
 * finalizer. On deletion the operator removes its finalizer first — "so the user's delete is not
 * held up by a slow cloud API" — and deletes the bucket after. If the process dies between the two
 * writes, or the finalizer removal applies but its answer is lost (504), the ConfigMap is gone by
 * the time the reconcile runs again: nothing is left to say the bucket should go, and it leaks.
 */
import {
  addFinalizer,
  configMapType,
  createOrUpdate,
  done,
  hasFinalizer,
  ignoreNotFound,
  isBeingDeleted,
  type Manager,
  removeFinalizer,
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

export function operator(manager: Manager): void {
  const { client } = manager;
  manager
    .controller(configMapType)
    .named('buckets')
    .complete(async (key) => {
      let request = await client.get(configMapType, key).catch(ignoreNotFound);
      if (request?.metadata.labels?.[WANTS_BUCKET] !== 'yes') return done();
      if (isBeingDeleted(request)) {
        if (!hasFinalizer(request, FINALIZER)) return done();
        // BUG: once the finalizer is off, nothing remembers the bucket if the next write never happens.
        await client.update(configMapType, removeFinalizer(request, FINALIZER));
        await client.delete(secretType, bucketKey(key)).catch(ignoreNotFound);
        return done();
      }
      if (!hasFinalizer(request, FINALIZER))
        request = await client.update(configMapType, addFinalizer(request, FINALIZER));
      await createOrUpdate(client, secretType, { metadata: bucketKey(key) }, (bucket) => ({
        ...bucket,
        data: { region: Buffer.from(request.data?.region ?? '').toString('base64') },
      }));
      return done();
    });
}

export default defineScenario({
  name: 'finalizer-order (buggy)',
  operator,
  setup: bucketSetup,
  invariants: { 'one bucket per live request, none leaked': noLeakedBuckets },
});
