/**
 * `converge run`: operator modules in one manager against a Kubernetes API, optionally gated by
 * leader election on a Kubernetes Lease or, with `--lease-backend nats`, on a NATS JetStream KV
 * entry ({@link KvLeaseLock}).
 */
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { KubeBackend, loadConfig, loadKubeconfig } from '@converge/kube';
import { KvLeaseLock, KvMembership, type NatsBackend } from '@converge/nats';
import {
  type Backend,
  type Fence,
  LeaderElector,
  type LeaderLock,
  LeaseLock,
  LeaseMembership,
  type Logger,
  ShardMember,
} from '@converge/runtime';
import type { NatsConnection } from '@nats-io/transport-node';
import type { RunArgs } from './args.ts';
import { commandLogger } from './cli-logger.ts';
import { describeWithCauses } from './errors.ts';
import { connectNats, natsUrl } from './nats-connection.ts';
import { natsBucketPrefix, openNatsObjects } from './nats-objects.ts';
import { operatedManager, operationsLine } from './operations.ts';
import { recordOperations } from './operations-record.ts';
import { wireModule } from './operator-module.ts';
import type { RunIo } from './process-io.ts';
import { runManagedWebhooks, runWebhookServer, runWebhooksLine } from './run-webhooks.ts';

/** The lock an elector uses, what to say about it, and what to close after the manager stopped. */
interface OpenedLock {
  readonly lock: LeaderLock;
  readonly description: string;
  close(): Promise<void>;
}

/** Runs the modules until `io.stopped` or an operator fails; returns the exit code. */
export async function runOperators(
  args: RunArgs,
  io: RunIo,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<number> {
  // Signals are handled from here on: the first stops gracefully once modules are wired, the next at once.
  const stopped = io.stopped;
  const logger = commandLogger(args, io, env);
  const config =
    args.kubeconfig === undefined && args.context === undefined
      ? loadConfig(args.namespace === undefined ? {} : { namespace: args.namespace })
      : loadKubeconfig({
          ...(args.kubeconfig === undefined ? {} : { path: resolve(args.kubeconfig) }),
          ...(args.context === undefined ? {} : { context: args.context }),
          ...(args.namespace === undefined ? {} : { namespace: args.namespace }),
        });
  const backend = new KubeBackend({ config, logger });
  const identity = args.identity ?? `${hostname()}-${process.pid}`;
  let opened: OpenedLock | undefined;
  let sharded:
    | { readonly member: ShardMember; readonly description: string; close(): Promise<void> }
    | undefined;
  let unrecord = (): void => {};
  let nats: { readonly backend: NatsBackend; readonly url: string; close(): Promise<void> } | undefined;
  // Revocations of shard members go to every backend that fences (the manager's routed backend).
  let fenceBackend: () => Backend = () => backend;
  try {
    if (args.natsBackend) {
      const url = natsUrl(args.nats, env);
      nats = { url, ...(await openNatsObjects(url, { name: 'converge-run-backend', logger, env })) };
    }
    if (args.leaderElect) {
      opened =
        args.leaseBackend === 'nats'
          ? await openNatsLock(args, identity, env)
          : kubernetesLock(args, backend, config.namespace, identity);
    }
    const elector =
      opened === undefined
        ? undefined
        : new LeaderElector({
            lock: opened.lock,
            logger,
            ...(args.leaseDurationMs === undefined ? {} : { leaseDurationMs: args.leaseDurationMs }),
            ...(args.renewDeadlineMs === undefined ? {} : { renewDeadlineMs: args.renewDeadlineMs }),
            ...(args.retryPeriodMs === undefined ? {} : { retryPeriodMs: args.retryPeriodMs }),
          });
    if (args.shardGroup !== undefined) {
      sharded = await openShardMember(
        args,
        backend,
        (fence, signal) => fenceBackend().announceFence?.(fence, signal),
        config.namespace,
        identity,
        env,
        logger,
      );
    }
    const webhookServer =
      runManagedWebhooks(args, backend, () => manager, logger) ?? runWebhookServer(args, logger);
    const { manager, server } = operatedManager(
      {
        backend,
        ...(nats === undefined ? {} : { backends: { nats: nats.backend } }),
        logger,
        ...(elector === undefined ? {} : { leaderElection: elector }),
        ...(sharded === undefined ? {} : { sharding: sharded.member }),
        ...(webhookServer === undefined ? {} : { webhookServer }),
      },
      args,
      logger,
      opened === undefined ? undefined : args.leaseName,
    );
    fenceBackend = () => manager.backend;
    if (nats !== undefined)
      io.out(
        `converge: NATS JetStream at ${nats.url} is the backend named nats (buckets ${natsBucketPrefix(env)}…): manager.useBackend('nats', [type]) keeps a kind there`,
      );
    for (const file of args.modules) {
      await wireModule(file, manager);
      io.out(`converge: running operator ${file}`);
    }
    const webhooks = runWebhooksLine(args, manager, webhookServer !== undefined);
    if (webhooks.out !== undefined) io.out(webhooks.out);
    if (webhooks.err !== undefined) io.err(webhooks.err);
    io.out(
      `converge: ${opened === undefined ? 'no leader election' : `identity ${identity}, leader election on ${opened.description}`}`,
    );
    if (sharded !== undefined) io.out(`converge: identity ${identity}, ${sharded.description}`);
    const stop = new AbortController();
    let failed = false;
    // The manager resolves only after the elector released the lease (on SIGTERM).
    const running = manager.start(stop.signal).catch((error: unknown) => {
      failed = true;
      io.err(`converge: operators stopped: ${describeWithCauses(error)}`);
    });
    const operations = await Promise.race([operationsLine(server), stopped, running]);
    if (typeof operations === 'string') {
      io.out(operations);
      // Where converge why finds it (.converge/operations.json), until it stops.
      unrecord = recordOperations(server?.url('metrics'), 'run', io);
    }
    await Promise.race([stopped, running]);
    stop.abort();
    await running;
    io.out('converge: stopped');
    return failed ? 1 : 0;
  } finally {
    unrecord();
    await opened?.close();
    await sharded?.close();
    await nats?.close();
    await backend.close();
  }
}

/**
 * This replica's member of `--shard-group`: on Leases through the Kubernetes API, or on a NATS KV
 * bucket with `--lease-backend nats`; the lease timings are the elector's flags. A member found
 * dead is revoked by raising its fence on the API server (refused there from then on).
 */
async function openShardMember(
  args: RunArgs,
  backend: KubeBackend,
  revoke: (fence: Fence, signal: AbortSignal) => unknown,
  configNamespace: string | undefined,
  identity: string,
  env: Readonly<Record<string, string | undefined>>,
  logger: Logger,
): Promise<{ readonly member: ShardMember; readonly description: string; close(): Promise<void> }> {
  const group = args.shardGroup as string;
  const timing = {
    ...(args.leaseDurationMs === undefined ? {} : { leaseDurationMs: args.leaseDurationMs }),
    ...(args.renewDeadlineMs === undefined ? {} : { renewDeadlineMs: args.renewDeadlineMs }),
    ...(args.retryPeriodMs === undefined ? {} : { retryPeriodMs: args.retryPeriodMs }),
  };
  if (args.leaseBackend === 'nats') {
    const url = natsUrl(args.nats, env);
    const connection = await connectNats(url, { name: 'converge-run-shard', reconnectForever: true });
    try {
      const membership = await KvMembership.open({
        connection,
        group,
        logger,
        ...(args.leaseBucket === undefined ? {} : { bucket: args.leaseBucket }),
      });
      return {
        member: new ShardMember({ membership, identity, logger, revoke, by: args.shardBy, ...timing }),
        description: `shard group ${group} on ${membership.bucket} at ${url}`,
        close: () => connection.close(),
      };
    } catch (error) {
      await connection.close();
      throw error;
    }
  }
  const namespace = args.leaseNamespace ?? configNamespace ?? 'default';
  const membership = new LeaseMembership({ backend, namespace, group, logger });
  return {
    member: new ShardMember({ membership, identity, logger, revoke, by: args.shardBy, ...timing }),
    description: `shard group ${group} on Leases in ${namespace}`,
    close: async () => {},
  };
}

function kubernetesLock(
  args: RunArgs,
  backend: KubeBackend,
  configNamespace: string | undefined,
  identity: string,
): OpenedLock {
  return {
    lock: new LeaseLock({
      backend,
      namespace: args.leaseNamespace ?? configNamespace ?? 'default',
      name: args.leaseName,
      identity,
    }),
    description: `lease ${args.leaseName}`,
    close: async () => {},
  };
}

/**
 * Connects to NATS (reconnecting for as long as the process runs: a leader cut off steps down by
 * its renew deadline, and the election resumes when the server is back) and opens the KV lease,
 * creating its bucket if needed. Rejects with a NatsUnreachableError if nothing answers.
 */
async function openNatsLock(
  args: RunArgs,
  identity: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<OpenedLock> {
  const url = natsUrl(args.nats, env);
  const connection: NatsConnection = await connectNats(url, { name: 'converge-run', reconnectForever: true });
  try {
    const name =
      args.leaseNamespace === undefined
        ? { key: args.leaseName }
        : { namespace: args.leaseNamespace, name: args.leaseName };
    const lock = await KvLeaseLock.open({
      connection,
      identity,
      ...name,
      ...(args.leaseBucket === undefined ? {} : { bucket: args.leaseBucket }),
    });
    return {
      lock,
      description: `${lock.describe()} at ${url}`,
      close: () => connection.close(),
    };
  } catch (error) {
    await connection.close();
    throw error;
  }
}
