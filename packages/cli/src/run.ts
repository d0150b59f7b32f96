/**
 * `converge run`: operator modules in one manager against a Kubernetes API, optionally gated by
 * leader election on a Kubernetes Lease or, with `--lease-backend nats`, on a NATS JetStream KV
 * entry ({@link KvLeaseLock}).
 */
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { KubeBackend, loadConfig, loadKubeconfig } from '@converge/kube';
import { KvLeaseLock } from '@converge/nats';
import { LeaderElector, type LeaderLock, LeaseLock } from '@converge/runtime';
import type { NatsConnection } from '@nats-io/transport-node';
import type { RunArgs } from './args.ts';
import { commandLogger } from './cli-logger.ts';
import { describeWithCauses } from './errors.ts';
import { connectNats, natsUrl } from './nats-connection.ts';
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
  let unrecord = (): void => {};
  try {
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
    const webhookServer =
      runManagedWebhooks(args, backend, () => manager, logger) ?? runWebhookServer(args, logger);
    const { manager, server } = operatedManager(
      {
        backend,
        logger,
        ...(elector === undefined ? {} : { leaderElection: elector }),
        ...(webhookServer === undefined ? {} : { webhookServer }),
      },
      args,
      logger,
      opened === undefined ? undefined : args.leaseName,
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
    await backend.close();
  }
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
