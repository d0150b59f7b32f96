import { OptionsError } from '@converge/runtime';
import { describe, expect, it } from 'vitest';
import { configMaps } from './fault-test-support.ts';
import { KubeBackend } from './kube-backend.ts';
import { cm, fake, json } from './wire-test-support.ts';

describe('KubeBackend writes on the wire', () => {
  it('writes with the field manager, dry run, patch content types, force for apply, and a DeleteOptions body', async () => {
    const { backend, requests } = await fake((r, res) => {
      if (r.method === 'DELETE') json(res, 200, { kind: 'Status', status: 'Success' });
      else json(res, 200, cm('a', '2'));
    });
    await backend.create(configMaps, { metadata: { name: 'a' } }, { dryRun: true });
    await backend.patch(configMaps, { namespace: '', name: 'a' }, { type: 'strategic', patch: { data: {} } });
    await backend.patch(
      configMaps,
      { namespace: 'x', name: 'a' },
      { type: 'apply', patch: { data: { k: 'v' } }, force: true },
      { fieldManager: 'me' },
    );
    await backend.patch(
      configMaps,
      { namespace: 'x', name: 'a' },
      { type: 'json', patch: [{ op: 'remove', path: '/data/k' }] },
      { subresource: 'status' },
    );
    expect(
      await backend.delete(
        configMaps,
        { namespace: 'x', name: 'a' },
        { preconditions: { uid: 'u' }, dryRun: true },
      ),
    ).toEqual({ status: 'deleted' });
    const [create, strategic, apply, json2, del] = requests;
    expect(create?.url.pathname, 'a namespaced object without namespace goes to the config namespace').toBe(
      '/api/v1/namespaces/home/configmaps',
    );
    expect(Object.fromEntries(create?.url.searchParams ?? [])).toEqual({
      fieldManager: 'converge',
      dryRun: 'All',
    });
    expect(JSON.parse(create?.body ?? '')).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'a' },
    });
    expect(strategic?.headers['content-type']).toBe('application/strategic-merge-patch+json');
    expect(strategic?.url.pathname).toBe('/api/v1/namespaces/home/configmaps/a');
    expect(apply?.headers['content-type']).toBe('application/apply-patch+yaml');
    expect(Object.fromEntries(apply?.url.searchParams ?? [])).toEqual({ fieldManager: 'me', force: 'true' });
    expect(JSON.parse(apply?.body ?? '')).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'a', namespace: 'x' },
      data: { k: 'v' },
    });
    expect(json2?.headers['content-type']).toBe('application/json-patch+json');
    expect(json2?.url.pathname).toBe('/api/v1/namespaces/x/configmaps/a/status');
    expect(JSON.parse(del?.body ?? '')).toEqual({
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      propagationPolicy: 'Background',
      preconditions: { uid: 'u' },
      dryRun: ['All'],
    });
  });

  it('tells a pending delete (an object with deletionTimestamp and finalizers, or 202) from a finished one', async () => {
    let answer: [number, unknown] = [200, {}];
    const { backend } = await fake((_r, res) => json(res, answer[0], answer[1]));
    const marked = { metadata: { name: 'a', deletionTimestamp: '2030-01-01T00:00:00Z', finalizers: ['f'] } };
    answer = [200, marked];
    expect(await backend.delete(configMaps, { namespace: 'x', name: 'a' })).toEqual({
      status: 'pending',
      object: { apiVersion: 'v1', kind: 'ConfigMap', ...marked },
    });
    answer = [200, { metadata: { name: 'a' } }];
    expect(await backend.delete(configMaps, { namespace: 'x', name: 'a' })).toEqual({ status: 'deleted' });
    answer = [202, { metadata: { name: 'a' } }];
    expect((await backend.delete(configMaps, { namespace: 'x', name: 'a' })).status).toBe('pending');
  });

  it('validates its options with an OptionsError naming the field', () => {
    const config = { server: 'https://x', namespace: 'n', tls: {}, auth: { type: 'none' } } as const;
    const field = (options: object): string | undefined => {
      try {
        new KubeBackend({ config, ...options });
      } catch (error) {
        expect(error).toBeInstanceOf(OptionsError);
        return (error as OptionsError).field;
      }
      return undefined;
    };
    expect(field({ config: { ...config, server: 'ftp://x' } })).toBe('config.server');
    expect(field({ config: { ...config, namespace: '' } })).toBe('config.namespace');
    expect(field({ config: { ...config, auth: { type: 'oidc' } } })).toBe('config.auth.type');
    expect(field({ fieldManager: '' })).toBe('fieldManager');
    expect(field({ maxRetries: -1 })).toBe('maxRetries');
    expect(field({ watchStallFactor: 0 })).toBe('watchStallFactor');
    expect(field({ requestTimeoutMs: Number.NaN })).toBe('requestTimeoutMs');
    expect(field({})).toBeUndefined();
  });
});
