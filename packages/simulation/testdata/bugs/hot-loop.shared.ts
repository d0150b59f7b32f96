/** The world of the hot-loop pair: ConfigMaps to mirror into Secrets, and what must hold. */
import { type ConfigMap, configMapType, secretType } from '@converge/runtime';
import type { InvariantContext, SetupContext } from '@converge/simulation';

const NAMESPACE = 'default';
const SOURCES = ['alpha', 'beta', 'gamma', 'delta'];

/** A ConfigMap's data as a Secret's (base64 values). */
export function secretData(data: Readonly<Record<string, string>> | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(data ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  );
}

function source(name: string, greeting: string): ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { namespace: NAMESPACE, name, labels: { mirror: 'yes' } },
    data: { greeting },
  };
}

/** Four sources, then one of them edited. */
export async function mirrorSetup({ client, sleep }: SetupContext): Promise<void> {
  for (const name of SOURCES) {
    await client.create(configMapType, source(name, `hello from ${name}`));
    await sleep(300);
  }
  await sleep(1_000);
  const beta = await client.get(configMapType, { namespace: NAMESPACE, name: 'beta' });
  await client.update(configMapType, { ...beta, data: { greeting: 'goodbye from beta' } });
}

/** Every source has a mirror with the same data. */
export async function mirrorsMatch({ client }: InvariantContext): Promise<void> {
  for (const name of SOURCES) {
    const cm = await client.get(configMapType, { namespace: NAMESPACE, name });
    const mirror = await client.get(secretType, { namespace: NAMESPACE, name: `${name}-mirror` });
    const want = JSON.stringify(secretData(cm.data));
    if (JSON.stringify(mirror.data ?? {}) !== want)
      throw new Error(`${name}-mirror holds ${JSON.stringify(mirror.data)}, want ${want}`);
  }
}
