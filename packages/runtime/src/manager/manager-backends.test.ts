import { describe, expect, it } from 'vitest';
import {
  type Backend,
  NotFoundError,
  type ResourceType,
  RoutedBackend,
  resourceType,
} from '../backend/index.ts';
import { object, widgetKind } from '../dynamic/test-support.ts';
import { AlreadyStartedError, OptionsError } from '../errors.ts';
import { configMapType } from '../kinds/index.ts';
import type { KubeObject } from '../object/index.ts';
import { setOwnerLabels } from '../ownership/index.ts';
import { done } from '../reconcile/index.ts';
import { FakeBackend, settle, VirtualClock } from '../testing/index.ts';
import { Manager } from './manager.ts';

const applications = widgetKind(9);
const key = { namespace: 'default', name: 'a' };

/** A default backend (Kubernetes, say) and a second one (NATS, say), each a FakeBackend. */
function backends() {
  const clock = new VirtualClock();
  const kube = new FakeBackend({ clock, name: 'kube' });
  const nats = new FakeBackend({ clock, name: 'nats' });
  return { clock, kube, nats };
}

describe('Manager.useBackend: kinds that live in another backend', () => {
  it("routes a kind's client reads, writes, controller and informers to its backend; other kinds stay on the default", async () => {
    const { clock, kube, nats } = backends();
    nats.set(applications, object(applications, 'a'));
    const manager = new Manager({ clock, backend: kube, backends: { nats } });
    await manager.useBackend('nats', [applications]);
    expect(manager.backend.name).toBe('kube+nats');
    const reconciled: string[] = [];
    manager
      .controller(applications)
      .owns(configMapType)
      .complete(async (request) => {
        reconciled.push(request.name);
        const app = await manager.client.get(applications, request).catch(() => undefined);
        if (app === undefined) return done();
        // A secondary in the default backend, owned by labels (owner references cannot cross backends).
        const config = setOwnerLabels(
          { metadata: { name: `${request.name}-config`, namespace: 'default' } },
          applications,
          app,
        );
        await manager.client.create(configMapType, config).catch(() => undefined);
        return done();
      });
    const stop = new AbortController();
    const run = manager.start(stop.signal);
    await settle();
    // 'a' from the initial list, then once more for the ConfigMap it created (an owned object's event).
    expect(reconciled).toEqual(['a', 'a']);
    expect((await manager.client.get(applications, key)).metadata.name).toBe('a');
    expect((await kube.get(configMapType, { namespace: 'default', name: 'a-config' })).metadata.name).toBe(
      'a-config',
    );
    // Nothing of the routed kind was asked of the default backend, and no ConfigMap of the other.
    expect(kube.listCalls.length + kube.watchCalls.length).toBe(1);
    await expect(nats.get(configMapType, { namespace: 'default', name: 'a-config' })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    await expect(kube.get(applications, key)).rejects.toBeInstanceOf(NotFoundError);
    // A write through the client lands in the kind's backend, and the controller hears of it.
    await manager.client.create(applications, object(applications, 'b'));
    await settle();
    expect(reconciled.slice(2)).toEqual(['b', 'b']);
    expect((await nats.get(applications, { namespace: 'default', name: 'b' })).metadata.name).toBe('b');
    // .owns() of a kind in the other backend maps by owner labels: a change to the ConfigMap wakes 'a'.
    const config = await kube.get(configMapType, { namespace: 'default', name: 'a-config' });
    await kube.update(configMapType, { ...config, data: { changed: 'yes' } });
    await settle();
    expect(reconciled.slice(4)).toEqual(['a']);
    // RBAC is derived for the kinds in the API server only.
    expect(manager.permissions.types().map((t) => t.plural)).toEqual(['configmaps']);
    stop.abort();
    await run;
  });

  it('shares one informer per kind between the route and the backend itself', async () => {
    const { clock, kube, nats } = backends();
    const manager = new Manager({ clock, backend: kube });
    await manager.useBackend(nats, [applications]);
    const routed = manager.informers.acquire({ backend: manager.backend, type: applications });
    const direct = manager.informers.acquire({ backend: nats, type: applications });
    expect(routed.informer).toBe(direct.informer);
    expect(manager.informers.size).toBe(1);
    routed.release();
    direct.release();
  });

  it('registers the kinds with a backend that registers kinds (a NATS backend makes their buckets)', async () => {
    const { clock, kube, nats } = backends();
    const registered: string[] = [];
    const registering = Object.assign(Object.create(nats) as Backend, {
      registerType: async (type: ResourceType) => {
        registered.push(type.plural);
        return type;
      },
    });
    const manager = new Manager({ clock, backend: kube });
    await manager.useBackend(registering, [applications]);
    expect(registered).toEqual([applications.plural]);
  });

  it('refuses what cannot work: an unknown name (naming those there are), a kind routed twice, after start, no default backend', async () => {
    const { clock, kube, nats } = backends();
    const manager = new Manager({ clock, backend: kube, backends: { nats } });
    expect(() => manager.namedBackend('redis')).toThrow(/one of the backends the host gave: nats/);
    await expect(manager.useBackend('redis', [applications])).rejects.toBeInstanceOf(OptionsError);
    expect(() => new Manager({ clock, backend: kube }).namedBackend('nats')).toThrow(
      /converge dev --nats URL gives one named nats/,
    );
    await manager.useBackend('nats', [applications]);
    await manager.useBackend('nats', [applications]);
    await expect(manager.useBackend(kube, [applications])).rejects.toThrow(/it goes to nats/);
    await expect(manager.useBackend('nats', [{} as ResourceType])).rejects.toBeInstanceOf(OptionsError);
    expect(() => new Manager({ clock, backend: kube, backends: { nats: {} as Backend } })).toThrow(
      /backends\.nats/,
    );
    const stop = new AbortController();
    const run = manager.start(stop.signal);
    await settle();
    await expect(manager.useBackend('nats', [widgetKind(2)])).rejects.toBeInstanceOf(AlreadyStartedError);
    stop.abort();
    await run;
    await expect(new Manager({ clock }).useBackend(nats, [applications])).rejects.toBeInstanceOf(
      OptionsError,
    );
  });
});

describe('RoutedBackend', () => {
  it('resolves apiVersion and kind through the routes first, every version of a routed group and plural to its backend', () => {
    const { kube, nats } = backends();
    const v2 = resourceType<KubeObject>({ ...applications, version: 'v2' });
    const routed = new RoutedBackend(kube);
    routed.route(nats, [applications]);
    expect(routed.backendFor(v2)).toBe(nats);
    expect(routed.backendFor(configMapType)).toBe(kube);
    expect(routed.resolveType('example.com/v1', applications.kind)).toBe(applications);
    expect(routed.resolveType('example.com/v9', applications.kind)).toBeUndefined();
  });
});
