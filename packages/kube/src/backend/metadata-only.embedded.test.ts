import type { AddressInfo } from 'node:net';
import { createServer, type Server, connect as tcpConnect } from 'node:net';
import { type ApiServer, createApiServer } from '@converge/apiserver';
import { Informer, type PartialObjectMetadata, type Secret, secretType } from '@converge/runtime';
import { Store } from '@converge/store';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeBackend } from './kube-backend.ts';

/**
 * A metadata-only informer through the KubeBackend against the embedded API server over HTTP, with
 * a TCP proxy between them that records every byte the server sent: the Secrets' values must never
 * travel, only their metadata as `meta.k8s.io/v1` PartialObjectMetadata.
 */
interface Rig {
  readonly server: ApiServer;
  /** A backend through the recording proxy. */
  readonly proxied: KubeBackend;
  /** A backend straight to the server (its answers are not recorded). */
  readonly direct: KubeBackend;
  /** Everything the server sent through the proxy so far. */
  received(): string;
  close(): Promise<void>;
}

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

async function start(): Promise<Rig> {
  const store = new Store();
  const server = createApiServer({ store, clusterDefaults: false, tls: false });
  const { url } = await server.listen();
  const upstream = new URL(url);
  const chunks: Buffer[] = [];
  const proxy: Server = createServer((client) => {
    const socket = tcpConnect(Number(upstream.port), upstream.hostname);
    client.pipe(socket);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.pipe(client);
    const end = (): void => {
      client.destroy();
      socket.destroy();
    };
    client.on('error', end);
    socket.on('error', end);
    client.on('close', end);
    socket.on('close', end);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  const auth = { type: 'token' as const, token: server.token ?? '' };
  const proxied = new KubeBackend({ config: { server: proxyUrl, namespace: 'default', tls: {}, auth } });
  const direct = new KubeBackend({ config: { server: url, namespace: 'default', tls: {}, auth } });
  return {
    server,
    proxied,
    direct,
    received: () => Buffer.concat(chunks).toString('utf8'),
    close: async () => {
      await proxied.close();
      await direct.close();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      await server.close();
      await store.close();
    },
  };
}

const value = (i: number): string => Buffer.from(`s3cr3t-value-${i}`).toString('base64');
const secret = (i: number): Secret => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: `s-${i}`, namespace: 'default', labels: { n: String(i) } },
  data: { password: value(i) },
});

describe('a metadata-only informer through the KubeBackend against the embedded API server over HTTP', () => {
  for (const initialList of ['watch-list', 'paginated'] as const) {
    it(`caches every Secret's metadata and nothing else travels (${initialList})`, async () => {
      rig = await start();
      const { direct, proxied } = rig;
      for (let i = 0; i < 30; i++) await direct.create(secretType, secret(i));
      const informer = new Informer<PartialObjectMetadata>({
        backend: proxied,
        type: secretType,
        metadataOnly: true,
        initialList,
        pageSize: 7,
      });
      const events: string[] = [];
      informer.subscribe((event) => events.push(`${event.type} ${event.object.metadata.name}`));
      const stop = new AbortController();
      const run = informer.start(stop.signal);
      try {
        await informer.waitForSync(stop.signal);
        expect(informer.cache.size).toBe(30);
        await direct.create(secretType, secret(30));
        const updated = await direct.get<Secret>(secretType, { namespace: 'default', name: 's-3' });
        await direct.update(secretType, {
          ...updated,
          metadata: { ...updated.metadata, labels: { n: 'three' } },
        });
        await direct.delete(secretType, { namespace: 'default', name: 's-4' });
        for (let i = 0; i < 500 && !events.includes('delete s-4'); i++)
          await new Promise((r) => setTimeout(r, 10));
        expect(events).toContain('create s-30');
        expect(events).toContain('update s-3');
        expect(events).toContain('delete s-4');
        const cached = informer.cache.list();
        expect(cached).toHaveLength(30);
        for (const object of cached) {
          expect(Object.keys(object).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
          expect(object).toMatchObject({ apiVersion: 'v1', kind: 'Secret' });
        }
        expect(informer.cache.get({ namespace: 'default', name: 's-3' })?.metadata.labels).toEqual({
          n: 'three',
        });
        const wire = rig.received();
        expect(wire).toContain('"kind":"PartialObjectMetadata"');
        for (let i = 0; i <= 30; i++) expect(wire, `the value of s-${i} travelled`).not.toContain(value(i));
      } finally {
        stop.abort();
        await run;
      }
    });
  }
});
