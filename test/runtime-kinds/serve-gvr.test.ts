/**
 * kro names a kind by its GroupVersionResource alone; `DynamicController.serve` takes one and
 * resolves it through the backend's discovery (`Backend.findResource`): against the embedded API
 * server, a CRD created after the controller started is found (discovery refreshed on the miss),
 * and one that does not exist is a `ResourceNotServedError` naming it.
 */
import {
  DynamicController,
  done,
  type KindRequest,
  type KubeObject,
  ResourceNotServedError,
  type ResourceType,
  resourceType,
} from '@converge/runtime';
import { FakeBackend } from '@converge/runtime/testing';
import { Store } from '@converge/store';
import { afterAll, describe, expect, it } from 'vitest';
import { crdOf, crdType, startKube } from './backends.ts';
import { eventually } from './probes.ts';

const gadgets: ResourceType = resourceType({
  group: 'example.com',
  version: 'v1',
  kind: 'Gadget',
  plural: 'gadgets',
  namespaced: true,
});
const gvr = { group: 'example.com', version: 'v1', resource: 'gadgets' };

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

function gadget(name: string): KubeObject {
  return { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { namespace: 'default', name } };
}

describe('DynamicController.serve with a bare GroupVersionResource (kro)', () => {
  it('against the API server: not served is a ResourceNotServedError; once its CRD exists, discovery finds it and its objects are reconciled', async () => {
    const kube = await startKube([]);
    cleanups.push(kube.close);
    const dynamic = new DynamicController({ backend: kube.backend });
    const stop = new AbortController();
    cleanups.push(async () => stop.abort());
    const run = dynamic.start(stop.signal);

    const missing = await dynamic
      .serve(gvr, () => done())
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(missing).toBeInstanceOf(ResourceNotServedError);
    expect((missing as ResourceNotServedError).code).toBe('CONVERGE_ERR_DYNAMIC_RESOURCE_NOT_SERVED');
    expect((missing as Error).message).toContain(
      'cannot serve example.com/v1/gadgets: the backend does not serve it',
    );
    expect(dynamic.served()).toEqual([]);

    await kube.backend.create(crdType, crdOf(gadgets));
    // The CRD is served shortly after it is created; serve asks discovery again on a miss (at most
    // once a second), so a user's retry finds it.
    const seen: KindRequest[] = [];
    const handler = (request: KindRequest) => {
      seen.push(request);
      return done();
    };
    await eventually(
      'serve to find the new CRD through discovery',
      () =>
        dynamic.serve(gvr, handler).then(
          () => true,
          (error: unknown) => {
            if (error instanceof ResourceNotServedError) return false;
            throw error;
          },
        ),
      () => dynamic.served(),
    );
    expect(dynamic.served()).toEqual([
      expect.objectContaining({
        group: 'example.com',
        version: 'v1',
        kind: 'Gadget',
        plural: 'gadgets',
        namespaced: true,
      }),
    ]);
    await kube.backend.create(gadgets, gadget('one'));
    await eventually(
      'the gadget to be reconciled',
      () => seen.length > 0,
      () => seen,
    );
    expect(seen[0]).toEqual({ kind: gvr, namespace: 'default', name: 'one' });
    stop.abort();
    await run;
  });

  it('on the in-process store it resolves from the served types; a backend without discovery is a ResourceNotServedError saying so', async () => {
    const store = new Store({ types: [gadgets] });
    const dynamic = new DynamicController({ backend: store });
    await dynamic.serve(gvr, () => done());
    expect(dynamic.served().map((t) => t.kind)).toEqual(['Gadget']);
    await expect(
      dynamic.serve({ group: 'example.com', version: 'v2', resource: 'gadgets' }, () => done()),
    ).rejects.toThrow('cannot serve example.com/v2/gadgets: the backend does not serve it');

    const bare = new DynamicController({ backend: new FakeBackend() });
    await expect(bare.serve(gvr, () => done())).rejects.toThrow(
      'cannot serve example.com/v1/gadgets: the backend has no discovery to resolve it',
    );
    await expect(
      bare.serve({ group: 'example.com', version: '', resource: 'gadgets' }, () => done()),
    ).rejects.toThrow(/a GroupVersionResource with a version and a resource/);
  });
});
