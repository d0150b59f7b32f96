/**
 * Test support (not part of the package's API): an embedded API server on port 0 over HTTPS, its
 * generated kubeconfig written to a temporary file and loaded with `loadKubeconfig`, a
 * {@link KubeBackend} on it, the given kinds registered as CRDs and the suite namespaces created —
 * all through the backend itself.
 *
 * @module
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ApiServer, createApiServer } from '@converge/apiserver';
import { isAlreadyExists, isNotFound, type ResourceType, resourceType } from '@converge/runtime';
import { Store } from '@converge/store';
import { type KubeConfig, loadKubeconfig } from '../config/index.ts';
import { KubeBackend } from './kube-backend.ts';
import type { KubeBackendOptions } from './options.ts';

/** The CustomResourceDefinition kind. */
export const crdType: ResourceType = resourceType({
  group: 'apiextensions.k8s.io',
  version: 'v1',
  kind: 'CustomResourceDefinition',
  plural: 'customresourcedefinitions',
  namespaced: false,
  generation: true,
});

/** The Namespace kind. */
export const namespaceType: ResourceType = resourceType({
  group: '',
  version: 'v1',
  kind: 'Namespace',
  plural: 'namespaces',
  namespaced: false,
  generation: false,
});

/** A running embedded server with a backend on it. */
export interface EmbeddedCluster {
  readonly server: ApiServer;
  readonly backend: KubeBackend;
  readonly config: KubeConfig;
  /** The kubeconfig file the config was loaded from. */
  readonly kubeconfigPath: string;
  /** Another backend on the same server (its own pool). */
  connect(options?: Partial<KubeBackendOptions>): KubeBackend;
  close(): Promise<void>;
}

/** Options of {@link startEmbeddedCluster}. */
export interface EmbeddedClusterOptions {
  /** Kinds to serve; custom ones (a group other than '') become CRDs with free-form spec and status. */
  readonly types?: readonly ResourceType[];
  /** Namespaces to create. */
  readonly namespaces?: readonly string[];
  /** The store's bookmark interval (default 60 000). */
  readonly bookmarkIntervalMs?: number;
  /** Options of the backend (config excepted). */
  readonly backend?: Partial<KubeBackendOptions>;
}

/** A CRD serving `type` with free-form objects (and a status subresource when the type has one). */
export function crdFor(type: ResourceType): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${type.plural}.${type.group}` },
    spec: {
      group: type.group,
      scope: type.namespaced ? 'Namespaced' : 'Cluster',
      names: {
        plural: type.plural,
        kind: type.kind,
        singular: type.singular ?? type.kind.toLowerCase(),
        ...(type.shortNames === undefined ? {} : { shortNames: [...type.shortNames] }),
      },
      versions: [
        {
          name: type.version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          ...(type.statusSubresource === true ? { subresources: { status: {} } } : {}),
        },
      ],
    },
  };
}

async function until(what: string, attempt: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await attempt()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Starts an embedded API server over HTTPS and a KubeBackend loaded from its kubeconfig. */
export async function startEmbeddedCluster(options: EmbeddedClusterOptions = {}): Promise<EmbeddedCluster> {
  const store = new Store({ bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000 });
  // the tests count what they wrote: no kube-root-ca.crt, default ServiceAccount or kubernetes Service
  const server = createApiServer({ store, clusterDefaults: false });
  await server.listen();
  const dir = mkdtempSync(join(tmpdir(), 'converge-kube-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  writeFileSync(kubeconfigPath, server.kubeconfig(), { mode: 0o600 });
  const config = loadKubeconfig({ path: kubeconfigPath, env: {} });
  const backends: KubeBackend[] = [];
  const connect = (extra: Partial<KubeBackendOptions> = {}): KubeBackend => {
    const backend = new KubeBackend({ ...options.backend, ...extra, config });
    backends.push(backend);
    return backend;
  };
  const backend = connect();
  const close = async (): Promise<void> => {
    await Promise.all(backends.map((b) => b.close()));
    await server.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const type of options.types ?? []) {
      if (type.group === '') continue;
      await backend.create(crdType, crdFor(type) as never);
      await until(`${type.plural}.${type.group} to be served`, async () => {
        try {
          await backend.list(type, { limit: 1 });
          return true;
        } catch (error) {
          if (isNotFound(error)) return false;
          throw error;
        }
      });
    }
    for (const name of options.namespaces ?? []) {
      await backend.create(namespaceType, { metadata: { name } }).catch((error: unknown) => {
        if (!isAlreadyExists(error)) throw error;
      });
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { server, backend, config, kubeconfigPath, connect, close };
}
