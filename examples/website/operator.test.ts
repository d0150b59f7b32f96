import { type Backend, Manager, type ResourceType } from '@converge/runtime';
import { VirtualClock } from '@converge/runtime/testing';
import { Store } from '@converge/store';
import { describe, expect, it } from 'vitest';
import website, {
  configMapType,
  deploymentType,
  FINALIZER,
  serviceType,
  type Website,
  websiteType,
} from './operator.ts';

const ns = 'default';
const eventsType: ResourceType = {
  group: 'events.k8s.io',
  version: 'v1',
  kind: 'Event',
  plural: 'events',
  namespaced: true,
  generation: false,
};
const key = { namespace: ns, name: 'hello' };

async function until(clock: VirtualClock, check: () => Promise<boolean>): Promise<boolean> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return true;
    await clock.advance(25);
  }
  return false;
}

describe('Website operator on the store', () => {
  it('creates an owned ConfigMap, Deployment and Service, reports Ready, follows spec edits, and cleans up through its finalizer', async () => {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
    const store = new Store({
      clock,
      types: [websiteType, configMapType, deploymentType, serviceType, eventsType],
    });
    const backend: Backend = store;
    const manager = new Manager({ clock, backend });
    website(manager);
    const abort = new AbortController();
    const running = manager.start(abort.signal);
    await store.create(websiteType, {
      apiVersion: 'examples.converge.dev/v1alpha1',
      kind: 'Website',
      metadata: { name: 'hello', namespace: ns },
      spec: { domain: 'hello.example.com', replicas: 2, content: '<h1>hi</h1>' },
    } as Website);

    const ready = () =>
      until(clock, async () => {
        const site = await store.get<Website>(websiteType, key);
        const ok =
          site.status?.conditions?.[0]?.status === 'True' &&
          site.status.observedGeneration === site.metadata.generation;
        return ok;
      });
    expect(await ready()).toBe(true);
    const site = await store.get<Website>(websiteType, key);
    expect(site.metadata.finalizers).toEqual([FINALIZER]);
    expect(site.status?.url).toBe('http://hello.example.com');
    for (const [t, name] of [
      [configMapType, 'hello-content'],
      [deploymentType, 'hello'],
      [serviceType, 'hello'],
    ] as const) {
      const child = await store.get(t, { namespace: ns, name });
      expect(child.metadata.ownerReferences?.[0]).toMatchObject({
        kind: 'Website',
        name: 'hello',
        controller: true,
      });
    }
    const deployment = await store.get<{ spec: { replicas: number } } & Website>(deploymentType, key);
    expect(deployment.spec.replicas).toBe(2);

    await store.update(websiteType, { ...site, spec: { ...site.spec, replicas: 5, content: '<h1>v2</h1>' } });
    expect(await ready()).toBe(true);
    expect((await store.get<Website>(websiteType, key)).status?.observedGeneration).toBe(2);
    expect(
      (await store.get<{ spec: { replicas: number } } & Website>(deploymentType, key)).spec.replicas,
    ).toBe(5);
    expect(
      (
        await store.get<{ data: Record<string, string> } & Website>(configMapType, {
          namespace: ns,
          name: 'hello-content',
        })
      ).data['index.html'],
    ).toBe('<h1>v2</h1>');

    await store.delete(websiteType, key);
    const gone = await until(clock, async () => {
      const lists = await Promise.all(
        [websiteType, configMapType, deploymentType, serviceType].map((t) =>
          store.list(t, { namespace: ns }),
        ),
      );
      return lists.every((l) => l.items.length === 0);
    });
    expect(gone).toBe(true);
    const events = (await store.list<{ reason: string } & Website>(eventsType, { namespace: ns })).items.map(
      (e) => e.reason,
    );
    expect(events).toEqual(
      expect.arrayContaining([
        'ConfigMapCreated',
        'DeploymentCreated',
        'ServiceCreated',
        'Ready',
        'DeploymentUpdated',
        'CleanedUp',
      ]),
    );
    abort.abort();
    await running;
    await store.close();
  });
});
