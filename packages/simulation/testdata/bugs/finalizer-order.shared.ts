/**
 * The world of the finalizer-order pair: ConfigMaps that each ask for a bucket, an object that
 * lives outside them (here a Secret in the `buckets` namespace: no owner reference can reach it, so
 * only a finalizer can clean it up), and the user deleting most of them again.
 */
import { type ConfigMap, configMapType, type ObjectKey, secretType } from '@converge/runtime';
import type { InvariantContext, SetupContext } from '@converge/simulation';

const NAMESPACE = 'default';
const BUCKETS = ['photos', 'logs', 'backups', 'assets', 'reports'];
const DELETED = ['photos', 'logs', 'backups', 'assets'];
export const FINALIZER = 'buckets.example.com/cleanup';
export const WANTS_BUCKET = 'buckets.example.com/bucket';

/** Where the bucket of a ConfigMap lives. */
export function bucketKey(owner: ObjectKey): { namespace: string; name: string } {
  return { namespace: 'buckets', name: `${owner.namespace}.${owner.name}` };
}

function request(name: string): ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { namespace: NAMESPACE, name, labels: { [WANTS_BUCKET]: 'yes' } },
    data: { region: 'eu-west-1' },
  };
}

/** Five bucket requests; later four of them deleted, one at a time. */
export async function bucketSetup({ client, sleep }: SetupContext): Promise<void> {
  await sleep(500);
  for (const name of BUCKETS) {
    await client.create(configMapType, request(name));
    await sleep(300);
  }
  await sleep(1_500);
  for (const name of DELETED) {
    await client.delete(configMapType, { namespace: NAMESPACE, name });
    await sleep(600);
  }
}

/** Every bucket belongs to a request that still exists, and every request has its bucket. */
export async function noLeakedBuckets({ client }: InvariantContext): Promise<void> {
  const buckets = await client.list(secretType, { namespace: 'buckets' });
  const requests = await client.list(configMapType, { namespace: NAMESPACE });
  const want = requests
    .filter((r) => r.metadata.labels?.[WANTS_BUCKET] === 'yes')
    .map((r) => bucketKey({ namespace: NAMESPACE, name: r.metadata.name ?? '' }).name)
    .sort();
  const have = buckets.map((b) => b.metadata.name ?? '').sort();
  if (JSON.stringify(have) !== JSON.stringify(want))
    throw new Error(`buckets ${JSON.stringify(have)}, want ${JSON.stringify(want)} (one per live request)`);
}
