import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeBackend } from './kube-backend.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A server with legacy discovery only; `apps/v1` fails like an unavailable aggregated API. */
async function legacyServer(): Promise<{ backend: KubeBackend; paths: string[] }> {
  const paths: string[] = [];
  const send = (res: ServerResponse, code: number, body: unknown): void => {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req, res) => {
    paths.push(req.url ?? '');
    switch (req.url ?? '') {
      case '/api':
        return send(res, 200, { kind: 'APIVersions', versions: ['v1'] });
      case '/apis':
        return send(res, 200, {
          kind: 'APIGroupList',
          groups: [
            {
              name: 'apps',
              versions: [{ groupVersion: 'apps/v1', version: 'v1' }],
              preferredVersion: { groupVersion: 'apps/v1' },
            },
            {
              name: 'example.com',
              versions: [
                { groupVersion: 'example.com/v1beta1', version: 'v1beta1' },
                { groupVersion: 'example.com/v1', version: 'v1' },
              ],
              preferredVersion: { groupVersion: 'example.com/v1' },
            },
          ],
        });
      case '/api/v1':
        return send(res, 200, {
          kind: 'APIResourceList',
          groupVersion: 'v1',
          resources: [
            { name: 'pods', singularName: 'pod', namespaced: true, kind: 'Pod', shortNames: ['po'] },
            { name: 'pods/status', namespaced: true, kind: 'Pod' },
            { name: 'namespaces', singularName: 'namespace', namespaced: false, kind: 'Namespace' },
          ],
        });
      case '/apis/example.com/v1':
      case '/apis/example.com/v1beta1':
        return send(res, 200, {
          kind: 'APIResourceList',
          groupVersion: (req.url ?? '').slice('/apis/'.length),
          resources: [{ name: 'widgets', singularName: 'widget', namespaced: true, kind: 'Widget' }],
        });
      default:
        return send(res, 503, {
          kind: 'Status',
          code: 503,
          reason: 'ServiceUnavailable',
          message: 'the server is currently unable to handle the request',
        });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const backend = new KubeBackend({
    config: { server: url, namespace: 'default', tls: {}, auth: { type: 'none' } },
  });
  cleanups.push(async () => {
    await backend.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { backend, paths };
}

describe('discovery', () => {
  it('falls back to legacy discovery, reading every group version and skipping one that fails', async () => {
    const { backend, paths } = await legacyServer();
    const types = await backend.discover();
    expect(paths.slice(0, 2)).toEqual(['/api', '/apis']);
    expect([...paths.slice(2)].sort()).toEqual([
      '/api/v1',
      '/apis/apps/v1',
      '/apis/example.com/v1',
      '/apis/example.com/v1beta1',
    ]);
    expect(types.map((t) => `${t.group}/${t.version}/${t.kind}`).sort()).toEqual([
      '/v1/Namespace',
      '/v1/Pod',
      'example.com/v1/Widget',
      'example.com/v1beta1/Widget',
    ]);
    expect(backend.resolveType('v1', 'Pod')).toMatchObject({
      plural: 'pods',
      singular: 'pod',
      shortNames: ['po'],
      namespaced: true,
      statusSubresource: true,
    });
    expect(
      backend.resolveType('apps/v1', 'Deployment'),
      'the failed group version is skipped',
    ).toBeUndefined();
  });

  it('shares one discovery between concurrent refreshes', async () => {
    const { backend, paths } = await legacyServer();
    await Promise.all([backend.discover(), backend.discover(), backend.discover()]);
    expect(paths.filter((p) => p === '/api')).toHaveLength(1);
  });
});
