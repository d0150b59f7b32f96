import { configMapType, FENCE_HEADER, FencedError } from '@converge/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedCluster, startEmbeddedCluster } from './test-harness.ts';
import { fake, json } from './wire-test-support.ts';

let cluster: EmbeddedCluster;
beforeAll(async () => {
  cluster = await startEmbeddedCluster({ types: [configMapType], namespaces: ['home'] });
});
afterAll(async () => {
  await cluster.close();
});

const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'home' } });

describe('KubeBackend fencing', () => {
  it('against converge serve: announces, sends the fence with writes, and a stale one is a FencedError', async () => {
    const backend = cluster.backend;
    const mark = await backend.announceFence({ name: 'home/op', holder: 'b', epoch: 3 });
    expect(mark).toEqual({ name: 'home/op', holder: 'b', epoch: 3 });
    expect(backend.fencing).toBe(true);
    await backend.create(configMapType, cm('fresh'), { fence: { name: 'home/op', holder: 'b', epoch: 3 } });
    for (const write of [
      backend.create(configMapType, cm('stale'), { fence: { name: 'home/op', holder: 'a', epoch: 2 } }),
      backend.delete(
        configMapType,
        { namespace: 'home', name: 'fresh' },
        { fence: { name: 'home/op', holder: 'a', epoch: 2 } },
      ),
      backend.announceFence({ name: 'home/op', holder: 'a', epoch: 2 }),
    ]) {
      const error = await write.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(FencedError);
      expect((error as FencedError).message).toContain('stale fencing epoch');
    }
    await expect(backend.get(configMapType, { namespace: 'home', name: 'fresh' })).resolves.toBeDefined();
  });

  it('against a Kubernetes API server (404, or 403 without RBAC for the path): does not fence, and says so', async () => {
    for (const status of [404, 403]) {
      const { backend, requests } = await fake((_request, res) =>
        json(res, status, {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: status === 404 ? 'NotFound' : 'Forbidden',
          code: status,
          message:
            status === 404
              ? 'the server could not find the requested resource'
              : 'forbidden: User "x" cannot post path "/converge/fences"',
        }),
      );
      await expect(backend.announceFence({ name: 'n', holder: 'a', epoch: 1 })).resolves.toBeUndefined();
      expect(backend.fencing).toBe(false);
      expect(requests[0]?.url.pathname).toBe('/converge/fences');
    }
  });

  it('writes carry the header; a 403 that names a stale fence is a FencedError, not "does not fence"', async () => {
    const { backend, requests } = await fake((request, res) => {
      if (request.url.pathname === '/converge/fences') {
        json(res, 403, {
          kind: 'Status',
          status: 'Failure',
          reason: 'Forbidden',
          code: 403,
          message:
            'stale fencing epoch: fence "n" is at epoch 5 (holder "b"); the write carried epoch 1 from "a"',
        });
        return;
      }
      json(res, 201, cm('x'));
    });
    await backend.create(configMapType, cm('x'), { fence: { name: 'ns/op', holder: 'pod a', epoch: 7 } });
    expect(requests[0]?.headers[FENCE_HEADER]).toBe('epoch=7; holder=pod%20a; name=ns%2Fop');
    await expect(backend.announceFence({ name: 'n', holder: 'a', epoch: 1 })).rejects.toBeInstanceOf(
      FencedError,
    );
  });
});
