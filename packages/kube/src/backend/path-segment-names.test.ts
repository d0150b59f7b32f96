import {
  BackendErrorCodes,
  BadRequestError,
  type KubeObject,
  noopLogger,
  realClock,
  resourceType,
} from '@converge/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Transport } from '../http/index.ts';
import { configMaps } from './fault-test-support.ts';
import { pathSegmentNameProblems, resourcePath } from './paths.ts';
import { type EmbeddedCluster, namespaceType, startEmbeddedCluster } from './test-harness.ts';

/*
 * The defect: `backend.delete(configMaps, { namespace, name: '..' })` sent
 * `DELETE …/namespaces/victim/configmaps/..`, which a normalising URL parser turns into
 * `DELETE …/namespaces/victim` — the namespace was deleted. client-go refuses such names before
 * building a request; so does the backend now.
 */

const deployments = resourceType({
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  plural: 'deployments',
  namespaced: true,
  statusSubresource: true,
});

let cluster: EmbeddedCluster;

beforeAll(async () => {
  cluster = await startEmbeddedCluster({ namespaces: ['victim'] });
  for (const name of ['keep-1', 'keep-2']) {
    await cluster.backend.create(configMaps, {
      metadata: { name, namespace: 'victim' },
      data: { a: '1' },
    } as KubeObject);
  }
});
afterAll(async () => {
  await cluster.close();
});

async function expectVictimIntact(): Promise<void> {
  const ns = await cluster.backend.get(namespaceType, { namespace: '', name: 'victim' });
  expect(ns.metadata?.deletionTimestamp).toBeUndefined();
  const list = await cluster.backend.list(configMaps, { namespace: 'victim' });
  expect(list.items.map((i) => i.metadata?.name).sort()).toEqual(['keep-1', 'keep-2']);
}

async function expectRefused(call: () => Promise<unknown>, message: string): Promise<void> {
  const before = cluster.backend.stats().requests;
  const error = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BadRequestError);
  expect(error).toMatchObject({ code: BackendErrorCodes.BAD_REQUEST, status: 400, message });
  expect(cluster.backend.stats().requests, 'no request was sent').toBe(before);
}

describe("KubeBackend: delete(configMaps, { name: '..' }) deleted the namespace", () => {
  it("delete with name '..' throws BadRequestError before any request; the namespace and its ConfigMaps stay", async () => {
    const { backend } = cluster;
    await expectRefused(
      () => backend.delete(configMaps, { namespace: 'victim', name: '..' }),
      `invalid resource name "..": [may not be '..']`,
    );
    await expectRefused(
      () => backend.delete(configMaps, { namespace: 'victim', name: '.' }),
      `invalid resource name ".": [may not be '.']`,
    );
    await expectVictimIntact();
  });

  it('refuses dot, slash and percent names and namespaces for every verb', async () => {
    const { backend } = cluster;
    const bad = ['.', '..', 'a/b', '../x', '%2e%2e', '50%'];
    const object = (name: string, namespace = 'victim'): KubeObject => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace, resourceVersion: '1' },
    });
    const patch = { type: 'merge', patch: { metadata: { labels: { hit: 'yes' } } } } as const;
    for (const name of bad) {
      const message = `invalid resource name ${JSON.stringify(name)}: [${pathSegmentNameProblems(name).join(' ')}]`;
      const key = { namespace: 'victim', name };
      await expectRefused(() => backend.get(configMaps, key), message);
      await expectRefused(() => backend.delete(configMaps, key), message);
      await expectRefused(() => backend.update(configMaps, object(name)), message);
      await expectRefused(
        () => backend.updateStatus(deployments, { ...object(name), kind: 'Deployment' }),
        message,
      );
      await expectRefused(() => backend.patch(configMaps, key, patch), message);
      await expectRefused(() => backend.patch(deployments, key, patch, { subresource: 'status' }), message);
      await expectRefused(() => backend.delete(namespaceType, { namespace: '', name }), message);
    }
    for (const namespace of bad) {
      const message = `invalid namespace ${JSON.stringify(namespace)}: [${pathSegmentNameProblems(namespace).join(' ')}]`;
      await expectRefused(() => backend.get(configMaps, { namespace, name: 'keep-1' }), message);
      await expectRefused(() => backend.delete(configMaps, { namespace, name: 'keep-1' }), message);
      await expectRefused(() => backend.list(configMaps, { namespace }), message);
      await expectRefused(() => backend.create(configMaps, object('new', namespace)), message);
      const iterator = backend.watch(configMaps, { namespace })[Symbol.asyncIterator]();
      await expect(iterator.next()).rejects.toMatchObject({ code: BackendErrorCodes.BAD_REQUEST, message });
    }
    await expectRefused(
      () =>
        backend.patch(configMaps, { namespace: 'victim', name: 'keep-1' }, patch, {
          // the type allows only 'status'; a JavaScript caller can pass anything
          subresource: '..' as 'status',
        }),
      `invalid subresource "..": [may not be '..']`,
    );
    await expectRefused(
      () => backend.delete(configMaps, { namespace: 'victim', name: '' }),
      'resource name may not be empty',
    );
    await expectVictimIntact();
  });

  it('percent-encodes names that are legal but not plain, and they reach exactly that object', async () => {
    expect(resourcePath(configMaps, 'victim', 'a b?c#d')).toBe(
      '/api/v1/namespaces/victim/configmaps/a%20b%3Fc%23d',
    );
    expect(resourcePath(configMaps, 'victim', '...')).toBe('/api/v1/namespaces/victim/configmaps/...');
    await expect(cluster.backend.get(configMaps, { namespace: 'victim', name: '...' })).rejects.toMatchObject(
      {
        status: 404,
      },
    );
    await expect(
      cluster.backend.get(configMaps, { namespace: 'victim', name: 'keep-1?x' }),
    ).rejects.toMatchObject({
      status: 404,
    });
    await expectVictimIntact();
  });

  it('the transport refuses a hand-built path with a dot segment, encoded or not', async () => {
    const transport = new Transport({
      config: cluster.config,
      clock: realClock,
      logger: noopLogger,
      userAgent: 'converge-test/1',
      requestTimeoutMs: 5_000,
      connectTimeoutMs: 2_000,
      keepAliveMs: 1_000,
      execTimeoutMs: 5_000,
      maxRetries: 0,
      maxRetryAfterMs: 0,
    });
    try {
      for (const path of [
        '/api/v1/namespaces/victim/configmaps/..',
        '/api/v1/namespaces/victim/configmaps/.',
        '/api/v1/namespaces/victim/configmaps/%2E%2e',
        '/api/v1/namespaces/victim/configmaps/.%2e?x=1',
      ]) {
        await expect(transport.send({ method: 'DELETE', path })).rejects.toBeInstanceOf(BadRequestError);
      }
      expect(transport.counters.requests).toBe(0);
    } finally {
      await transport.close();
    }
    await expectVictimIntact();
  });
});
