/** The world of the stale-state pair: database requests that each need one credentials Secret. */
import { type ConfigMap, configMapType, secretType } from '@converge/runtime';
import type { InvariantContext, SetupContext } from '@converge/simulation';

export const NAMESPACE = 'default';
/** The label naming the request a credentials Secret belongs to. */
export const FOR = 'db.example.com/credentials-for';
const REQUESTS = ['orders', 'users', 'billing', 'search', 'audit'];

function request(name: string): ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { namespace: NAMESPACE, name, labels: { 'db.example.com/request': 'yes' } },
    data: { user: name },
  };
}

/** Five requests, a few hundred ms apart. */
export async function requestSetup({ client, sleep }: SetupContext): Promise<void> {
  for (const name of REQUESTS) {
    await client.create(configMapType, request(name));
    await sleep(250);
  }
}

/** Every request has exactly one credentials Secret. */
export async function oneSecretEach({ client }: InvariantContext): Promise<void> {
  for (const name of REQUESTS) {
    const secrets = await client.list(secretType, { namespace: NAMESPACE, labelSelector: `${FOR}=${name}` });
    const names = secrets.map((s) => s.metadata.name);
    if (names.length !== 1)
      throw new Error(`request ${name} has ${names.length} credentials Secrets: ${names.join(', ')}`);
  }
}
