/** The world of the edge-triggered pair: settings ConfigMaps published as Secrets, edited as they go. */
import { type ConfigMap, configMapType, secretType } from '@converge/runtime';
import type { InvariantContext, SetupContext } from '@converge/simulation';

const NAMESPACE = 'default';
const APPS = ['web', 'api', 'worker', 'cron', 'admin'];
export const PUBLISH = 'settings.example.com/publish';

/** A ConfigMap's data as a Secret's (base64 values). */
export function secretData(data: Readonly<Record<string, string>> | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(data ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  );
}

function settings(name: string): ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { namespace: NAMESPACE, name, labels: { [PUBLISH]: 'yes' } },
    data: { logLevel: 'info' },
  };
}

/** Once the operator runs: five settings objects, then each edited once, in another order. */
export async function settingsSetup({ client, sleep }: SetupContext): Promise<void> {
  await sleep(1_000);
  for (const name of APPS) {
    await client.create(configMapType, settings(name));
    await sleep(400);
  }
  for (const name of [...APPS].reverse()) {
    const current = await client.get(configMapType, { namespace: NAMESPACE, name });
    await client.update(configMapType, { ...current, data: { ...current.data, logLevel: 'debug' } });
    await sleep(700);
  }
}

/** Every settings object is published as a Secret with the same data. */
export async function published({ client }: InvariantContext): Promise<void> {
  for (const name of APPS) {
    const cm = await client.get(configMapType, { namespace: NAMESPACE, name });
    const secret = await client.get(secretType, { namespace: NAMESPACE, name: `${name}-settings` });
    const want = JSON.stringify(secretData(cm.data));
    if (JSON.stringify(secret.data ?? {}) !== want)
      throw new Error(`${name}-settings holds ${JSON.stringify(secret.data)}, want ${want}`);
  }
}
