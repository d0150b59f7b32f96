/**
 * The lease of the leader-election scenario (`leader-scenario.ts`), as the scenario sees it: the
 * flags that point `converge run --leader-elect` at it, a watch of its holders, and its
 * transitions count at the end. Two kinds: a Kubernetes Lease on the served API (`lease`), and a
 * KV lease on the shared NATS server in a bucket of its own, removed afterwards (`nats`).
 */
import { KubeBackend, loadKubeconfig } from '@converge/kube';
import { decodeKvLease, KvLeaseLock } from '@converge/nats';
import { type Lease, leaseType } from '@converge/runtime';
import { type KV, type KvEntry, Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { sharedNatsUrl, uniqueSuffix } from '../../nats/src/test-harness.ts';

/** Which lock the replicas elect with. */
export type LeaderLockKind = 'lease' | 'nats';

export interface ScenarioLease {
  /** Flags of `converge run`, besides `--leader-elect` and the timings. */
  readonly args: readonly string[];
  /** Distinct holders in the order a watch sees them, released states left out, until `signal` aborts. */
  recordHolders(signal: AbortSignal): Promise<string[]>;
  /** The lease's transitions count now. */
  transitions(): Promise<number>;
  /** Releases what the scenario opened (and, for `nats`, deletes the bucket). */
  close(): Promise<void>;
}

const NAMESPACE = 'default';

/** The Lease `default/<name>` on the API server of `kubeconfig`. */
export function kubernetesLease(kubeconfig: string, name: string): ScenarioLease {
  const backend = new KubeBackend({ config: loadKubeconfig({ path: kubeconfig }) });
  return {
    args: ['--lease-name', name],
    async recordHolders(signal) {
      const holders: string[] = [];
      let resourceVersion: string | undefined;
      while (!signal.aborted) {
        const from = resourceVersion === undefined ? {} : { resourceVersion };
        try {
          for await (const event of backend.watch<Lease>(leaseType, {
            namespace: NAMESPACE,
            signal,
            ...from,
          })) {
            if (event.type === 'BOOKMARK') {
              resourceVersion = event.resourceVersion;
              continue;
            }
            resourceVersion = event.object.metadata.resourceVersion;
            const holder =
              event.object.metadata.name === name ? (event.object.spec?.holderIdentity ?? '') : '';
            if (holder !== '' && holder !== holders.at(-1)) holders.push(holder);
          }
        } catch (error) {
          if (!signal.aborted) throw error;
        }
      }
      return holders;
    },
    async transitions() {
      const lease = await backend.get<Lease>(leaseType, { namespace: NAMESPACE, name });
      return lease.spec?.leaseTransitions ?? 0;
    },
    close: () => backend.close(),
  };
}

/**
 * The KV lease `<key>` on the shared NATS server, in a fresh bucket created here as the lock
 * creates it (so the replicas find it and the watch can start before the first of them).
 */
export async function natsLease(key: string): Promise<ScenarioLease> {
  const url = await sharedNatsUrl();
  const bucket = `leader-scenario-${uniqueSuffix()}`;
  const connection = await connect({ servers: url, name: 'leader-scenario' });
  let kv: KV;
  try {
    await KvLeaseLock.open({ connection, bucket, key, identity: 'leader-scenario' });
    kv = await new Kvm(connection).open(bucket);
  } catch (error) {
    await connection.close();
    throw error;
  }
  const record = (entry: KvEntry) =>
    decodeKvLease(entry.value, { bucket, key, revision: entry.revision }).record;
  return {
    args: ['--lease-backend', 'nats', '--nats', url, '--lease-bucket', bucket, '--lease-name', key],
    async recordHolders(signal) {
      const holders: string[] = [];
      const entries = await kv.watch({ key });
      const stop = (): void => entries.stop();
      signal.addEventListener('abort', stop, { once: true });
      if (signal.aborted) stop();
      try {
        for await (const entry of entries) {
          if (entry.operation !== 'PUT') continue;
          const holder = record(entry).holderIdentity;
          if (holder !== '' && holder !== holders.at(-1)) holders.push(holder);
        }
      } finally {
        signal.removeEventListener('abort', stop);
      }
      return holders;
    },
    async transitions() {
      const entry = await kv.get(key);
      return entry === null || entry.operation !== 'PUT' ? 0 : record(entry).leaderTransitions;
    },
    async close() {
      try {
        await kv.destroy();
      } finally {
        await connection.close();
      }
    },
  };
}
