/**
 * The world of the orphans pair: ConfigMaps asking for an API token (a Secret), most of them
 * deleted again later. A token must go with its request: garbage collection does that, through the
 * token's controller reference.
 */
import { type ConfigMap, configMapType, secretType } from '@converge/runtime';
import type { InvariantContext, SetupContext } from '@converge/simulation';

const NAMESPACE = 'default';
const REQUESTS = ['ci', 'deploy', 'grafana', 'backup', 'audit'];
const DELETED = ['ci', 'deploy', 'grafana', 'backup'];
export const WANTS_TOKEN = 'tokens.example.com/token';
/** Labels every token, so that the invariant finds them all. */
export const TOKEN = 'tokens.example.com/for';

function request(name: string): ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { namespace: NAMESPACE, name, labels: { [WANTS_TOKEN]: 'yes' } },
    data: { scope: 'read' },
  };
}

/** Five token requests; later four of them deleted. */
export async function tokenSetup({ client, sleep }: SetupContext): Promise<void> {
  await sleep(500);
  for (const name of REQUESTS) {
    await client.create(configMapType, request(name));
    await sleep(300);
  }
  await sleep(1_500);
  for (const name of DELETED) {
    await client.delete(configMapType, { namespace: NAMESPACE, name });
    await sleep(500);
  }
}

/** Tokens exist exactly for the requests that still exist. */
export async function tokensFollowRequests({ client }: InvariantContext): Promise<void> {
  const tokens = await client.list(secretType, { namespace: NAMESPACE, labelSelector: TOKEN });
  const requests = await client.list(configMapType, { namespace: NAMESPACE });
  const want = requests
    .filter((r) => r.metadata.labels?.[WANTS_TOKEN] === 'yes')
    .map((r) => `${r.metadata.name}-token`)
    .sort();
  const have = tokens.map((t) => t.metadata.name ?? '').sort();
  if (JSON.stringify(have) !== JSON.stringify(want))
    throw new Error(`tokens ${JSON.stringify(have)}, want ${JSON.stringify(want)} (one per live request)`);
}
