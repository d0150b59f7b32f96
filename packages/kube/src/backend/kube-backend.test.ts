import { chmodSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  ConflictError,
  NotFoundError,
  resourceType,
  TooManyRequestsError,
  UnsupportedError,
} from '@converge/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { loadKubeconfig } from '../config/index.ts';
import { type ConfigMap, configMaps } from './fault-test-support.ts';
import { KubeBackend } from './kube-backend.ts';
import { crdFor, crdType, type EmbeddedCluster, startEmbeddedCluster } from './test-harness.ts';

const gadgets = resourceType({
  group: 'test.converge.dev',
  version: 'v1',
  kind: 'Gadget',
  plural: 'gadgets',
  namespaced: true,
  statusSubresource: true,
});

let cluster: EmbeddedCluster | undefined;
afterEach(async () => {
  await cluster?.close();
  cluster = undefined;
});

async function start(): Promise<EmbeddedCluster> {
  cluster = await startEmbeddedCluster({ types: [gadgets] });
  return cluster;
}

const KEY = { namespace: 'default', name: 'cm' };

describe('KubeBackend against the embedded API server', () => {
  it('discovers served kinds, and resolve() refreshes discovery for a kind registered later', async () => {
    const { backend } = await start();
    expect(backend.resolveType('v1', 'ConfigMap'), 'nothing is known before discovery').toBeUndefined();
    const types = await backend.discover();
    expect(types.length).toBeGreaterThan(5);
    expect(backend.resolveType('v1', 'ConfigMap')).toMatchObject({
      group: '',
      plural: 'configmaps',
      namespaced: true,
    });
    expect(backend.resolveType('v1', 'Namespace')).toMatchObject({ namespaced: false });
    expect(backend.resolveType('test.converge.dev/v1', 'Gadget')).toMatchObject({
      plural: 'gadgets',
      statusSubresource: true,
    });
    const later = resourceType({ ...gadgets, kind: 'Gizmo', plural: 'gizmos' });
    await backend.create(crdType, crdFor(later) as never);
    expect(backend.resolveType('test.converge.dev/v1', 'Gizmo')).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 1_050));
    expect(await backend.resolve('test.converge.dev/v1', 'Gizmo')).toMatchObject({ plural: 'gizmos' });
    expect(await backend.resolve('test.converge.dev/v1', 'Nothing')).toBeUndefined();
  });

  it('server-side apply records the field manager, conflicts between managers, and force takes over', async () => {
    const { backend } = await start();
    const apply = (manager: string, value: string, force?: boolean) =>
      backend.patch<ConfigMap>(
        configMaps,
        KEY,
        { type: 'apply', patch: { data: { owner: value } }, ...(force ? { force } : {}) },
        { fieldManager: manager },
      );
    const first = await apply('alice', 'a');
    expect(first.data).toEqual({ owner: 'a' });
    expect(first.metadata.managedFields?.map((f) => (f as { manager: string }).manager)).toContain('alice');
    await expect(apply('bob', 'b')).rejects.toBeInstanceOf(ConflictError);
    expect((await apply('bob', 'b', true)).data).toEqual({ owner: 'b' });
  });

  it('applies a strategic merge patch to a built-in kind and rejects it on a custom resource with UnsupportedError', async () => {
    const { backend } = await start();
    await backend.create(configMaps, { metadata: { name: 'cm' }, data: { a: '1' } } as ConfigMap);
    const patched = await backend.patch<ConfigMap>(configMaps, KEY, {
      type: 'strategic',
      patch: { data: { b: '2' } },
    });
    expect(patched.data).toEqual({ a: '1', b: '2' });
    await backend.create(gadgets, { metadata: { name: 'g', namespace: 'default' } });
    await expect(
      backend.patch(gadgets, { namespace: 'default', name: 'g' }, { type: 'strategic', patch: { spec: {} } }),
    ).rejects.toBeInstanceOf(UnsupportedError);
  });

  it('dry-run writes return the result without persisting it', async () => {
    const { backend } = await start();
    const dry = await backend.create<ConfigMap>(
      configMaps,
      { metadata: { name: 'cm' }, data: { a: '1' } } as ConfigMap,
      { dryRun: true },
    );
    expect(dry.data).toEqual({ a: '1' });
    await expect(backend.get(configMaps, KEY)).rejects.toBeInstanceOf(NotFoundError);
    await backend.create(configMaps, { metadata: { name: 'cm' } });
    await backend.delete(configMaps, KEY, { dryRun: true });
    expect((await backend.get(configMaps, KEY)).metadata.name).toBe('cm');
  });

  it('surfaces a 429 it may not retry as TooManyRequestsError with details.retryAfterSeconds', async () => {
    const c = await start();
    const backend = c.connect({ maxRetries: 0 });
    c.server.faults.failRatio({
      pathPattern: '/api/v1/namespaces/default/configmaps',
      methods: ['POST'],
      ratio: 1,
      status: 429,
      retryAfterSeconds: 2,
    });
    const error = await backend.create(configMaps, { metadata: { name: 'cm' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TooManyRequestsError);
    expect((error as TooManyRequestsError).details.retryAfterSeconds).toBe(2);
  });

  it('aborting a watch ends the iteration and closes the server-side watch', async () => {
    const { backend, server } = await start();
    const abort = new AbortController();
    const iterator = backend
      .watch(configMaps, { namespace: 'default', signal: abort.signal })
      [Symbol.asyncIterator]();
    const pending = iterator.next();
    await backend.create(configMaps, { metadata: { name: 'cm' } });
    expect((await pending).value).toMatchObject({ type: 'ADDED' });
    expect(server.openWatches).toBe(1);
    const next = iterator.next();
    abort.abort();
    expect(await next).toEqual({ done: true, value: undefined });
    for (let i = 0; i < 100 && server.openWatches > 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(server.openWatches).toBe(0);
  });

  it('authenticates with an exec plugin from the kubeconfig, re-running it once after a 401', async () => {
    const c = await start();
    const dir = dirname(c.kubeconfigPath);
    const plugin = join(dir, 'plugin.sh');
    // First run: a token the server rejects; later runs: the server's token.
    writeFileSync(
      plugin,
      `#!/bin/sh\nn=$(( $(cat "${dir}/runs" 2>/dev/null || echo 0) + 1 ))\necho "$n" > "${dir}/runs"\n` +
        `if [ "$n" = 1 ]; then t=wrong; else t="$1"; fi\n` +
        `printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$t"\n`,
    );
    chmodSync(plugin, 0o755);
    const kubeconfig = join(dir, 'exec-kubeconfig');
    const ca = Buffer.from(c.server.ca ?? '').toString('base64');
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: c.server.url, 'certificate-authority-data': ca } }],
        users: [
          {
            name: 'u',
            user: {
              exec: {
                apiVersion: 'client.authentication.k8s.io/v1',
                command: './plugin.sh',
                args: [c.server.token],
                interactiveMode: 'Never',
              },
            },
          },
        ],
        contexts: [{ name: 'k', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'k',
      }),
    );
    const backend = new KubeBackend({ config: loadKubeconfig({ path: kubeconfig, env: {} }) });
    try {
      await backend.create(configMaps, { metadata: { name: 'cm' } });
      expect((await backend.get(configMaps, KEY)).metadata.name).toBe('cm');
      expect(backend.stats().reauthenticated).toBe(1);
    } finally {
      await backend.close();
    }
  });
});
