/**
 * The real backends of the runtime-kinds leak tests and benchmark (not part of any package), each
 * with a count of open watches taken where the watches live, not from the client:
 *
 * - {@link startKube}: the embedded API server on 127.0.0.1 port 0 (HTTPS, bearer token) and a
 *   {@link KubeBackend} loaded from the kubeconfig it wrote; the kinds become CRDs, created through
 *   the backend and waited for until served. Open watches: the server's `openWatches`.
 * - {@link startNats}: a {@link NatsBackend} on the NATS server at `NATS_URL` (default
 *   `nats://127.0.0.1:4222`) with a fresh bucket prefix; its buckets are deleted on close. Open
 *   watches: the consumers JetStream holds on those buckets' streams (each watch is one ordered
 *   consumer), asked over a connection of the test's own.
 *
 * @module
 */

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ApiServer, createApiServer } from '@converge/apiserver';
import { KubeBackend, loadKubeconfig } from '@converge/kube';
import { NatsBackend } from '@converge/nats';
import {
  type Backend,
  isNotFound,
  type KubeObject,
  type ResourceType,
  resourceType,
} from '@converge/runtime';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';

/** A backend under test and where its open watches are counted. */
export interface BackendUnderTest {
  readonly backend: Backend;
  /** Watches open now, as the server sees them. */
  openWatches(): Promise<number>;
  /** Closes the backend and everything started for it. */
  close(): Promise<void>;
}

export const crdType: ResourceType = resourceType({
  group: 'apiextensions.k8s.io',
  version: 'v1',
  kind: 'CustomResourceDefinition',
  plural: 'customresourcedefinitions',
  namespaced: false,
});

/** A CRD serving `type` with free-form objects. */
export function crdOf(type: ResourceType): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${type.plural}.${type.group}` },
    spec: {
      group: type.group,
      scope: type.namespaced ? 'Namespaced' : 'Cluster',
      names: { plural: type.plural, kind: type.kind, singular: type.kind.toLowerCase() },
      versions: [
        {
          name: type.version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  } as KubeObject;
}

/** Retries `attempt` every 20 ms while it throws NotFound (a CRD not served yet), for 10 s at most. */
async function whileNotFound(what: string, attempt: () => Promise<unknown>): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await attempt();
      return;
    } catch (error) {
      if (!isNotFound(error) || Date.now() > deadline) {
        throw new Error(`${what} is not served`, { cause: error });
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The embedded API server serving `kinds` as CRDs, and a KubeBackend on it. */
export async function startKube(
  kinds: readonly ResourceType[],
): Promise<BackendUnderTest & { readonly server: ApiServer }> {
  const dir = mkdtempSync(join(tmpdir(), 'converge-runtime-kinds-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  const server = createApiServer({ kubeconfigPath });
  let backend: KubeBackend | undefined;
  const close = async (): Promise<void> => {
    await backend?.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await server.listen();
    backend = new KubeBackend({ config: loadKubeconfig({ path: kubeconfigPath, env: {} }) });
    const kube = backend;
    for (const kind of kinds) await kube.create(crdType, crdOf(kind));
    for (const kind of kinds) await whileNotFound(kindLabel(kind), () => kube.list(kind, { limit: 1 }));
    return { backend: kube, server, openWatches: async () => server.openWatches, close };
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
}

/** A NatsBackend serving `kinds` on fresh buckets of the shared NATS server. */
export async function startNats(kinds: readonly ResourceType[]): Promise<BackendUnderTest> {
  const url = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
  const prefix = `rk${randomBytes(4).toString('hex')}_`;
  const probe = await connect({ servers: url, name: 'runtime-kinds-probe' });
  const jsm = await jetstreamManager(probe);
  let backend: NatsBackend | undefined;
  const close = async (): Promise<void> => {
    await backend?.close();
    const streams: string[] = [];
    for await (const name of jsm.streams.names()) if (name.startsWith(`KV_${prefix}`)) streams.push(name);
    await Promise.all(streams.map((name) => jsm.streams.delete(name)));
    await probe.close();
  };
  try {
    backend = await NatsBackend.connect({ servers: url, types: kinds, bucketPrefix: prefix });
    const nats = backend;
    const streams = kinds.map((kind) => `KV_${nats.bucketName(kind)}`);
    const openWatches = async (): Promise<number> => {
      const infos = await Promise.all(streams.map((name) => jsm.streams.info(name)));
      return infos.reduce((sum, info) => sum + info.state.consumer_count, 0);
    };
    return { backend: nats, openWatches, close };
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
}

function kindLabel(kind: ResourceType): string {
  return `${kind.plural}.${kind.group}`;
}
