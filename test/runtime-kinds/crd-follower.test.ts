/**
 * CRD following against the embedded API server over HTTPS, driven by the real kubectl as a user
 * would: CRDs applied, relabelled, given a new storage version and deleted while a `CrdFollower`
 * runs; first with a recording `ServesKinds`, then with the real `DynamicController`, whose
 * handler reconciles objects of a CRD applied while it runs.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ApiServer, createApiServer } from '@converge/apiserver';
import { KubeBackend, loadKubeconfig } from '@converge/kube';
import {
  CrdFollower,
  DynamicController,
  type GroupVersionResource,
  type KindHandler,
  type KindRequest,
  kindId,
  type ResourceType,
  type ServesKinds,
} from '@converge/runtime';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const TEST_MS = 60_000;

/** A ServesKinds that records its calls; `waitFor` resolves once a call was made `times` times. */
class RecordingKinds implements ServesKinds {
  readonly calls: string[] = [];
  readonly #served = new Map<string, ResourceType>();
  #wake: (() => void)[] = [];

  async serve(type: ResourceType, _handler: KindHandler): Promise<void> {
    this.#served.set(kindId(type), type);
    this.#record(`serve ${kindId(type)}`);
  }

  async stopServing(type: GroupVersionResource | ResourceType): Promise<void> {
    this.#served.delete(kindId(type));
    this.#record(`stop ${kindId(type)}`);
  }

  served(): ResourceType[] {
    return [...this.#served.values()];
  }

  ids(): string[] {
    return [...this.#served.keys()].sort();
  }

  async waitFor(call: string, times = 1): Promise<void> {
    while (this.calls.filter((c) => c === call).length < times) {
      await new Promise<void>((resolve) => this.#wake.push(resolve));
    }
  }

  #record(call: string): void {
    this.calls.push(call);
    const wake = this.#wake;
    this.#wake = [];
    for (const resolve of wake) resolve();
  }
}

interface Cluster {
  readonly server: ApiServer;
  readonly backend: KubeBackend;
  kubectl(args: readonly string[], input?: string): Promise<string>;
  close(): Promise<void>;
}

async function startCluster(): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), 'converge-crd-follower-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const server = createApiServer({ kubeconfigPath: kubeconfig });
  await server.listen();
  const backend = new KubeBackend({ config: loadKubeconfig({ path: kubeconfig }) });
  const kubectl = (args: readonly string[], input = ''): Promise<string> =>
    new Promise((resolve, reject) => {
      const argv = [
        '--kubeconfig',
        kubeconfig,
        '--cache-dir',
        join(dir, 'cache'),
        '--request-timeout=30s',
        ...args,
      ];
      const child = execFile(
        'kubectl',
        argv,
        { timeout: 90_000, killSignal: 'SIGKILL', env: { ...process.env, KUBECONFIG: kubeconfig } },
        (error, stdout, stderr) => {
          if (error === null) resolve(stdout);
          else reject(new Error(`kubectl ${args.join(' ')} failed: ${stderr.trim() || String(error)}`));
        },
      );
      child.stdin?.end(input);
    });
  return {
    server,
    backend,
    kubectl,
    async close() {
      await backend.close();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A CRD of `<plural>.example.com` with free-form objects; the last version is stored unless told. */
function crd(
  plural: string,
  options: { versions?: string[]; storage?: string; follow?: string } = {},
): string {
  const versions = options.versions ?? ['v1'];
  const storage = options.storage ?? versions.at(-1);
  return JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${plural}.example.com`,
      ...(options.follow === undefined ? {} : { labels: { 'converge.dev/follow': options.follow } }),
    },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural, kind: `${plural.charAt(0).toUpperCase()}${plural.slice(1, -1)}` },
      versions: versions.map((name) => ({
        name,
        served: true,
        storage: name === storage,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      })),
    },
  });
}

const id = (plural: string, version = 'v1'): string => `example.com/${version}/${plural}`;

let cluster: Cluster;
let stop: AbortController;
const running: Promise<void>[] = [];

beforeEach(async () => {
  cluster = await startCluster();
  stop = new AbortController();
});

afterEach(async () => {
  stop.abort();
  await Promise.all(running.splice(0));
  await cluster.close();
});

async function apply(manifest: string): Promise<void> {
  const names = (await cluster.kubectl(['apply', '-f', '-', '-o', 'name'], manifest)).trim();
  await cluster.kubectl(['wait', '--for=condition=Established', '--timeout=60s', names]);
}

describe('CrdFollower against the embedded API server', () => {
  it(
    'serves labelled CRDs as they are applied, relabelled, given a new storage version and deleted',
    async () => {
      const kinds = new RecordingKinds();
      const follower = new CrdFollower({
        backend: cluster.backend,
        controller: kinds,
        labelSelector: 'converge.dev/follow=yes',
        handlerFor: () => () => undefined,
      });
      running.push(follower.start(stop.signal));
      await follower.waitForSync(stop.signal);

      // An unlabelled CRD, then a labelled one: watch events come in order, so once the labelled
      // one is served the unlabelled one was passed over.
      await apply(crd('gadgets'));
      await apply(crd('widgets', { follow: 'yes' }));
      await kinds.waitFor(`serve ${id('widgets')}`);
      expect(kinds.ids()).toEqual([id('widgets')]);
      // Discovery was refreshed before serving: a client resolving the kind finds it.
      expect(cluster.backend.resolveType('example.com/v1', 'Widget')?.plural).toBe('widgets');

      await cluster.kubectl(['label', 'crd', 'widgets.example.com', 'converge.dev/follow=no', '--overwrite']);
      await kinds.waitFor(`stop ${id('widgets')}`);
      await cluster.kubectl(['label', 'crd', 'gadgets.example.com', 'converge.dev/follow=yes']);
      await kinds.waitFor(`serve ${id('gadgets')}`);
      expect(kinds.ids()).toEqual([id('gadgets')]);

      await apply(crd('gadgets', { versions: ['v1', 'v2'], follow: 'yes' }));
      await kinds.waitFor(`serve ${id('gadgets', 'v2')}`);
      expect(kinds.ids()).toEqual([id('gadgets', 'v2')]);

      await cluster.kubectl(['delete', 'crd', 'gadgets.example.com']);
      await kinds.waitFor(`stop ${id('gadgets', 'v2')}`);
      expect(kinds.ids()).toEqual([]);
      expect(kinds.calls).toEqual([
        `serve ${id('widgets')}`,
        `stop ${id('widgets')}`,
        `serve ${id('gadgets')}`,
        `stop ${id('gadgets')}`,
        `serve ${id('gadgets', 'v2')}`,
        `stop ${id('gadgets', 'v2')}`,
      ]);
    },
    TEST_MS,
  );

  it(
    'with a DynamicController, reconciles objects of a CRD applied while it runs, without a restart',
    async () => {
      const { backend } = cluster;
      const dynamic = new DynamicController({ backend });
      const reconciled: KindRequest[] = [];
      const follower = new CrdFollower({
        backend,
        controller: dynamic,
        handlerFor: (type) => async (request) => {
          reconciled.push(request);
          await backend.patch(
            type,
            { namespace: request.namespace, name: request.name },
            { type: 'merge', patch: { metadata: { labels: { reconciled: 'yes' } } } },
          );
        },
      });
      running.push(dynamic.start(stop.signal), follower.start(stop.signal));
      await follower.waitForSync(stop.signal);
      expect(follower.following()).toEqual([]);

      await apply(crd('widgets'));
      await cluster.kubectl(
        ['apply', '-f', '-'],
        JSON.stringify({
          apiVersion: 'example.com/v1',
          kind: 'Widget',
          metadata: { name: 'first', namespace: 'default' },
          spec: { size: 1 },
        }),
      );
      await cluster.kubectl([
        'wait',
        '--for=jsonpath={.metadata.labels.reconciled}=yes',
        '--timeout=60s',
        'widgets.example.com/first',
        '-n',
        'default',
      ]);
      expect(reconciled[0]).toEqual({
        kind: { group: 'example.com', version: 'v1', resource: 'widgets' },
        namespace: 'default',
        name: 'first',
      });
      expect(dynamic.served().map(kindId)).toEqual([id('widgets')]);
    },
    TEST_MS,
  );
});
