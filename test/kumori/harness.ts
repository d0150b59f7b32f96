/**
 * What the Kumori tests run against: an embedded Kubernetes API server reached over HTTP through
 * its kubeconfig (as kubectl reaches it), and NATS JetStream KV on the shared test server with a
 * bucket prefix of its own, deleted afterwards.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiServer } from '@converge/apiserver';
import { KubeBackend, loadKubeconfig } from '@converge/kube';
import { NatsBackend } from '@converge/nats';
import type { Backend, KubeObject, ObjectKey, ResourceType } from '@converge/runtime';
import { isNotFound } from '@converge/runtime';
import { Store } from '@converge/store';
import { sharedNatsUrl, uniqueSuffix } from '../../packages/nats/src/test-harness.ts';
import { deleteBuckets } from '../../packages/nats/src/test-support.ts';

/** The Kubernetes side: a KubeBackend on an embedded API server, and kubectl pointed at it. */
export interface Cluster {
  readonly kube: KubeBackend;
  /**
   * Runs kubectl against the embedded server; resolves to its standard output, rejects on failure.
   * Never synchronously: the server answers from this process's event loop.
   */
  kubectl(...args: string[]): Promise<string>;
  close(): Promise<void>;
}

export async function startCluster(): Promise<Cluster> {
  const store = new Store();
  const server = createApiServer({ store });
  await server.listen();
  const dir = mkdtempSync(join(tmpdir(), 'converge-kumori-test-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, server.kubeconfig(), { mode: 0o600 });
  const kube = new KubeBackend({ config: loadKubeconfig({ path: kubeconfig, env: {} }) });
  return {
    kube,
    kubectl: (...args) =>
      new Promise((resolve, reject) => {
        execFile(
          'kubectl',
          ['--kubeconfig', kubeconfig, ...args],
          { encoding: 'utf8' },
          (error, stdout, stderr) => {
            if (error === null) resolve(stdout);
            else reject(new Error(`kubectl ${args.join(' ')} failed: ${stderr}`, { cause: error }));
          },
        );
      }),
    close: async () => {
      await kube.close();
      await server.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A NATS backend serving `types` from buckets of a fresh prefix; `destroy` closes it and deletes them. */
export async function startNats(types: readonly ResourceType[]) {
  const url = await sharedNatsUrl();
  const prefix = `kumori${uniqueSuffix()}_`;
  const backend = await NatsBackend.connect({ servers: url, types, bucketPrefix: prefix });
  return {
    backend,
    destroy: async () => {
      await backend.close().catch(() => {});
      await deleteBuckets(url, prefix);
    },
  };
}

/** Polls `probe` every 20 ms until it returns something other than undefined; fails after 15 s. */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The object at `key`, or undefined when there is none. */
export async function find<T extends KubeObject = KubeObject>(
  backend: Backend,
  type: ResourceType,
  key: ObjectKey,
): Promise<T | undefined> {
  try {
    return await backend.get<T>(type, key);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}
