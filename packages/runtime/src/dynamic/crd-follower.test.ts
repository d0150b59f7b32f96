import { describe, expect, it } from 'vitest';
import type { ResourceType } from '../backend/index.ts';
import { OptionsError } from '../errors.ts';
import { InformerRegistry } from '../informer/index.ts';
import {
  type CustomResourceDefinition,
  type CustomResourceDefinitionVersion,
  customResourceDefinitionType,
} from '../kinds/index.ts';
import { MemoryLogger } from '../log/index.ts';
import { FakeBackend, settle, VirtualClock } from '../testing/index.ts';
import { CrdFollower, type CrdFollowerOptions } from './crd-follower.ts';
import {
  type GroupVersionResource,
  type KindHandler,
  kindId,
  type ServeOptions,
  type ServesKinds,
} from './types.ts';

const crdType = customResourceDefinitionType;

/** A pending promise and its resolve/reject. */
function deferred(): { promise: Promise<void>; resolve: () => void; reject: (error: Error) => void } {
  let resolve = (): void => undefined;
  let reject = (_error: Error): void => undefined;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * A ServesKinds that records every call and checks the follower's promises as they happen: never
 * two operations at once on one resource (`plural.group`), never two versions of one resource served.
 */
class FakeKinds implements ServesKinds {
  readonly calls: string[] = [];
  readonly options: (ServeOptions | undefined)[] = [];
  readonly violations: string[] = [];
  /** Holds the next operation on a kind id until resolved or rejected. */
  readonly gates = new Map<string, ReturnType<typeof deferred>>();
  readonly #served = new Map<string, ResourceType>();
  readonly #busy = new Set<string>();

  async serve(type: ResourceType, _handler: KindHandler, options?: ServeOptions): Promise<void> {
    await this.#operation(`serve ${kindId(type)}`, type, () => {
      const other = [...this.#served.values()].find(
        (t) => t.plural === type.plural && t.group === type.group && t.version !== type.version,
      );
      if (other !== undefined) this.violations.push(`${kindId(type)} served while ${kindId(other)} is`);
      this.#served.set(kindId(type), type);
    });
    this.options.push(options);
  }

  async stopServing(type: GroupVersionResource | ResourceType): Promise<void> {
    await this.#operation(`stop ${kindId(type)}`, type, () => this.#served.delete(kindId(type)));
  }

  served(): ResourceType[] {
    return [...this.#served.values()];
  }

  ids(): string[] {
    return [...this.#served.keys()].sort();
  }

  /** Holds the next operation on `id` until the returned gate is settled. */
  hold(id: string): ReturnType<typeof deferred> {
    const gate = deferred();
    this.gates.set(id, gate);
    return gate;
  }

  async #operation(
    call: string,
    type: GroupVersionResource | ResourceType,
    apply: () => void,
  ): Promise<void> {
    const resource = `${'plural' in type ? type.plural : type.resource}.${type.group}`;
    if (this.#busy.has(resource)) this.violations.push(`${call} while another operation on ${resource} runs`);
    this.#busy.add(resource);
    this.calls.push(call);
    try {
      const gate = this.gates.get(kindId(type));
      this.gates.delete(kindId(type));
      if (gate !== undefined) await gate.promise;
      apply();
    } finally {
      this.#busy.delete(resource);
    }
  }
}

interface CrdFields {
  readonly versions?: readonly string[];
  readonly storage?: string;
  readonly labels?: Record<string, string>;
  readonly established?: boolean;
  readonly statusSubresource?: boolean;
  readonly description?: string;
}

/** A CRD for `<plural>.example.com`, established, with one stored version unless told otherwise. */
function crd(plural: string, fields: CrdFields = {}): CustomResourceDefinition {
  const names = fields.versions ?? ['v1'];
  const storage = fields.storage ?? names.at(-1);
  const versions: CustomResourceDefinitionVersion[] = names.map((name) => ({
    name,
    served: true,
    storage: name === storage,
    schema: {
      openAPIV3Schema: {
        type: 'object',
        'x-kubernetes-preserve-unknown-fields': true,
        ...(fields.description === undefined ? {} : { description: fields.description }),
      },
    },
    ...(fields.statusSubresource === true ? { subresources: { status: {} } } : {}),
  }));
  const kind = `${plural.charAt(0).toUpperCase()}${plural.slice(1, -1)}`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${plural}.example.com`,
      ...(fields.labels === undefined ? {} : { labels: fields.labels }),
    },
    spec: { group: 'example.com', scope: 'Namespaced', names: { plural, kind }, versions },
    status:
      fields.established === false
        ? { conditions: [{ type: 'Established', status: 'False' }] }
        : {
            conditions: [
              { type: 'NamesAccepted', status: 'True' },
              { type: 'Established', status: 'True' },
            ],
          },
  };
}

const id = (plural: string, version = 'v1'): string => `example.com/${version}/${plural}`;

function setup(options: Partial<CrdFollowerOptions> = {}, backend?: FakeBackend) {
  const clock = new VirtualClock();
  const store = backend ?? new FakeBackend({ clock });
  const kinds = new FakeKinds();
  const logger = new MemoryLogger();
  const handlers: string[] = [];
  const follower = new CrdFollower({
    backend: store,
    controller: kinds,
    handlerFor: (type) => {
      handlers.push(kindId(type));
      return () => undefined;
    },
    clock,
    logger,
    ...options,
  });
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  return {
    clock,
    backend: store,
    kinds,
    logger,
    handlers,
    follower,
    stop,
    set: (object: CustomResourceDefinition) => store.set(crdType, object),
    remove: (name: string) => store.remove(crdType, { namespace: '', name: `${name}.example.com` }),
    start: async () => {
      running = follower.start(stop.signal);
      await settle();
    },
    close: async () => {
      stop.abort();
      await running;
    },
  };
}

describe('CrdFollower', () => {
  it('serves the storage version of each established CRD it lists at start; waitForSync waits for those serves', async () => {
    const t = setup();
    t.set(crd('widgets'));
    t.set(crd('gadgets', { versions: ['v1', 'v2'], storage: 'v1' }));
    const gate = t.kinds.hold(id('gadgets'));
    await t.start();
    let synced = false;
    void t.follower.waitForSync(t.stop.signal).then(() => {
      synced = true;
    });
    await settle();
    expect(t.kinds.calls.sort()).toEqual([`serve ${id('gadgets')}`, `serve ${id('widgets')}`]);
    expect(synced).toBe(false);
    gate.resolve();
    await settle();
    expect(synced).toBe(true);
    expect(t.follower.following().map(kindId).sort()).toEqual([id('gadgets'), id('widgets')]);
    expect(t.kinds.served().find((type) => type.plural === 'widgets')).toMatchObject({
      kind: 'Widget',
      namespaced: true,
      requireResourceVersionOnUpdate: true,
    });
    await t.close();
  });

  it('serves a CRD created, or established, while it runs, without a restart', async () => {
    const t = setup();
    await t.start();
    await t.follower.waitForSync(t.stop.signal);
    t.set(crd('widgets', { established: false }));
    await settle();
    expect(t.kinds.calls).toEqual([]);
    t.set(crd('widgets'));
    t.set(crd('gadgets'));
    await settle();
    expect(t.kinds.ids()).toEqual([id('gadgets'), id('widgets')]);
    await t.close();
  });

  it('stops serving a CRD that is deleted or stops being established', async () => {
    const t = setup();
    t.set(crd('widgets'));
    t.set(crd('gadgets'));
    await t.start();
    t.remove('widgets');
    t.set(crd('gadgets', { established: false }));
    await settle();
    expect(t.kinds.calls.filter((c) => c.startsWith('stop')).sort()).toEqual([
      `stop ${id('gadgets')}`,
      `stop ${id('widgets')}`,
    ]);
    expect(t.kinds.ids()).toEqual([]);
    expect(t.follower.following()).toEqual([]);
    await t.close();
  });

  it('follows only CRDs matching its label selector: relabelling one stops or starts its kind', async () => {
    const t = setup({ labelSelector: 'example.com/follow=yes' });
    t.set(crd('widgets', { labels: { 'example.com/follow': 'yes' } }));
    t.set(crd('gadgets'));
    await t.start();
    expect(t.kinds.ids()).toEqual([id('widgets')]);
    t.set(crd('widgets', { labels: { 'example.com/follow': 'no' } }));
    t.set(crd('gadgets', { labels: { 'example.com/follow': 'yes' } }));
    await settle();
    expect(t.kinds.ids()).toEqual([id('gadgets')]);
    await t.close();
  });

  it('follows only CRDs its filter accepts, asked again on every change', async () => {
    const t = setup({ filter: (object) => object.metadata.annotations?.follow === 'true' });
    const annotated = (object: CustomResourceDefinition, value: string): CustomResourceDefinition => ({
      ...object,
      metadata: { ...object.metadata, annotations: { follow: value } },
    });
    t.set(annotated(crd('widgets'), 'true'));
    t.set(crd('gadgets'));
    await t.start();
    expect(t.kinds.ids()).toEqual([id('widgets')]);
    t.set(annotated(crd('widgets'), 'false'));
    await settle();
    expect(t.kinds.ids()).toEqual([]);
    await t.close();
  });

  it('switches a kind whose storage version moves: the old version is stopped before the new one is served', async () => {
    const t = setup();
    t.set(crd('widgets'));
    await t.start();
    const stopping = t.kinds.hold(id('widgets'));
    t.set(crd('widgets', { versions: ['v1', 'v2'], storage: 'v2' }));
    await settle();
    // The new version waits for the old one's stop (and its in-flight reconciles).
    expect(t.kinds.calls).toEqual([`serve ${id('widgets')}`, `stop ${id('widgets')}`]);
    stopping.resolve();
    await settle();
    expect(t.kinds.calls.at(-1)).toBe(`serve ${id('widgets', 'v2')}`);
    expect(t.kinds.ids()).toEqual([id('widgets', 'v2')]);
    expect(t.follower.following().map(kindId)).toEqual([id('widgets', 'v2')]);
    expect(t.kinds.violations).toEqual([]);
    await t.close();
  });

  it('leaves the kind alone when a change does not touch it, and serves it again in place when its facts change', async () => {
    const t = setup();
    t.set(crd('widgets'));
    await t.start();
    t.set(crd('widgets', { description: 'a schema edit', labels: { team: 'a' } }));
    t.set(crd('widgets', { versions: ['v1', 'v2alpha1'], storage: 'v1' }));
    await settle();
    expect(t.kinds.calls).toEqual([`serve ${id('widgets')}`]);
    t.set(crd('widgets', { statusSubresource: true }));
    await settle();
    // Same group, version and resource: served again (the type replaced), never stopped meanwhile.
    expect(t.kinds.calls).toEqual([`serve ${id('widgets')}`, `serve ${id('widgets')}`]);
    expect(t.kinds.served()[0]?.statusSubresource).toBe(true);
    await t.close();
  });

  it('serves neither a CRD handlerFor declines nor a malformed one (logged), and serves the rest', async () => {
    const t = setup({ handlerFor: (type) => (type.plural === 'gadgets' ? undefined : () => undefined) });
    t.set(crd('widgets'));
    t.set(crd('gadgets'));
    const broken = crd('things');
    t.set({ ...broken, spec: { ...broken.spec, scope: 'Everywhere' } });
    await t.start();
    await t.follower.waitForSync(t.stop.signal);
    expect(t.kinds.ids()).toEqual([id('widgets')]);
    expect(t.logger.records.find((r) => r.message === 'CRD cannot be served')?.fields).toMatchObject({
      crd: 'things.example.com',
      reason: 'spec.scope is neither Namespaced nor Cluster',
    });
    await t.close();
  });

  it('retries a serve that rejects after a backoff on its clock, logs it, and keeps following', async () => {
    const t = setup();
    t.set(crd('widgets'));
    const gate = t.kinds.hold(id('widgets'));
    await t.start();
    gate.reject(new Error('sync timed out'));
    await t.follower.waitForSync(t.stop.signal);
    expect(t.follower.following()).toEqual([]);
    expect(t.logger.records.filter((r) => r.level === 'error').map((r) => r.message)).toEqual([
      'Following a CRD failed; retrying after a backoff',
    ]);
    await t.clock.advance(999);
    await settle();
    expect(t.kinds.calls).toEqual([`serve ${id('widgets')}`]);
    await t.clock.advance(1);
    await settle();
    expect(t.kinds.calls).toEqual([`serve ${id('widgets')}`, `serve ${id('widgets')}`]);
    expect(t.follower.following().map(kindId)).toEqual([id('widgets')]);
    // Still following: a new CRD is served.
    t.set(crd('gadgets'));
    await settle();
    expect(t.kinds.ids()).toEqual([id('gadgets'), id('widgets')]);
    await t.close();
  });

  it('applies the changes of one CRD in order, one at a time, while other CRDs proceed', async () => {
    const t = setup();
    const gate = t.kinds.hold(id('widgets'));
    t.set(crd('widgets'));
    await t.start();
    // widgets v1 is still being served; it moves to v2, then v3, and gadgets appears.
    t.set(crd('widgets', { versions: ['v1', 'v2'], storage: 'v2' }));
    await settle();
    t.set(crd('widgets', { versions: ['v1', 'v2', 'v3'], storage: 'v3' }));
    t.set(crd('gadgets'));
    await settle();
    expect(t.kinds.calls).toEqual([`serve ${id('widgets')}`, `serve ${id('gadgets')}`]);
    gate.resolve();
    await settle();
    expect(t.kinds.calls).toEqual([
      `serve ${id('widgets')}`,
      `serve ${id('gadgets')}`,
      `stop ${id('widgets')}`,
      `serve ${id('widgets', 'v3')}`,
    ]);
    expect(t.kinds.violations).toEqual([]);
    await t.close();
  });

  it('passes the serve options, fixed or computed per CRD', async () => {
    const t = setup({ serveOptions: (type) => ({ maxConcurrent: type.plural.length }) });
    t.set(crd('widgets'));
    await t.start();
    expect(t.kinds.options).toEqual([{ maxConcurrent: 'widgets'.length }]);
    await t.close();
    const fixed = setup({ serveOptions: { filterUnchangedGeneration: false } });
    fixed.set(crd('widgets'));
    await fixed.start();
    expect(fixed.kinds.options).toEqual([{ filterUnchangedGeneration: false }]);
    await fixed.close();
  });

  it('stops serving every kind it served when its signal aborts, and then resolves', async () => {
    const t = setup();
    t.set(crd('widgets'));
    t.set(crd('gadgets'));
    await t.start();
    expect(t.kinds.ids()).toHaveLength(2);
    await t.close();
    expect(t.kinds.ids()).toEqual([]);
    expect(t.follower.following()).toEqual([]);
    // Nothing is served after it stopped.
    t.set(crd('things'));
    await settle();
    expect(t.kinds.ids()).toEqual([]);
  });

  it('takes its CRD informer from a shared registry when given one, and releases it when it stops', async () => {
    const clock = new VirtualClock();
    const informers = new InformerRegistry({ clock });
    const registryStop = new AbortController();
    const registryRun = informers.start(registryStop.signal);
    const t = setup({ informers, labelSelector: 'a=b' }, new FakeBackend({ clock }));
    t.set(crd('widgets', { labels: { a: 'b' } }));
    await t.start();
    expect(informers.size).toBe(1);
    expect(informers.informers()[0]?.type.plural).toBe('customresourcedefinitions');
    expect(t.kinds.ids()).toEqual([id('widgets')]);
    await t.close();
    expect(informers.size).toBe(0);
    registryStop.abort();
    await registryRun;
  });

  it('refreshes discovery before serving a new kind when the backend resolves kinds on demand', async () => {
    const order: string[] = [];
    class ResolvingBackend extends FakeBackend {
      async resolve(apiVersion: string, kind: string): Promise<ResourceType | undefined> {
        order.push(`resolve ${apiVersion} ${kind}`);
        return undefined;
      }
    }
    const clock = new VirtualClock();
    const backend = new ResolvingBackend({ clock });
    const t = setup({}, backend);
    const serve = t.kinds.serve.bind(t.kinds);
    t.kinds.serve = async (type, handler, options) => {
      order.push(`serve ${kindId(type)}`);
      await serve(type, handler, options);
    };
    t.set(crd('widgets'));
    await t.start();
    expect(order).toEqual(['resolve example.com/v1 Widget', `serve ${id('widgets')}`]);
    await t.close();
  });

  it('rejects bad options at construction, and needs no leader by default', () => {
    const backend = new FakeBackend();
    const controller = new FakeKinds();
    const handlerFor = () => undefined;
    expect(() => new CrdFollower({ backend, controller } as unknown as CrdFollowerOptions)).toThrow(
      OptionsError,
    );
    expect(() => new CrdFollower({ backend, controller: {} as ServesKinds, handlerFor })).toThrow(
      OptionsError,
    );
    expect(
      () => new CrdFollower({ backend, controller, handlerFor, serveOptions: 3 as unknown as ServeOptions }),
    ).toThrow(OptionsError);
    expect(new CrdFollower({ backend, controller, handlerFor }).needLeaderElection).toBe(false);
    expect(
      new CrdFollower({ backend, controller, handlerFor, needLeaderElection: true }).needLeaderElection,
    ).toBe(true);
  });
});
