/**
 * `converge serve` and `converge dev`: the embedded API server, and with `dev` operator modules
 * in one manager over its store.
 */
import { statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { type ApiServer, createApiServer, insecureExposure } from '@converge/apiserver';
import type { Backend, Logger } from '@converge/runtime';
import { Store } from '@converge/store';
import { FAULT_ADMIN_TOKEN_ENV, type ServeArgs, TOKEN_ENV } from './args.ts';
import { commandLogger } from './cli-logger.ts';
import type { ServiceAccountBackend } from './dev-service-account.ts';
import type { DevWebhooks } from './dev-webhooks.ts';
import { describeError as describe, describeWithCauses } from './errors.ts';
import type { OperationsArgs } from './operations-args.ts';
import { recordOperations } from './operations-record.ts';
import type { RunIo } from './process-io.ts';

/** What `io.stopped` resolves to in a race with other work. */
const STOPPED = Symbol('stopped');

/**
 * Serves the API; with modules, runs them in one manager over the server's store, until
 * `io.stopped` or the manager fails. A module that fails to load or wire stops the command: the
 * server is closed and the error thrown (main prints it and exits 1). A bundled example (`converge
 * dev` with no module, `bundled`) is reported and left out instead: the `kumori` example needs a
 * NATS server and the `poller` example a PostgreSQL, the others need nothing. A stop signal while
 * modules load stops at once.
 */
export async function serve(
  args: ServeArgs & Partial<OperationsArgs> & { readonly nats?: string | undefined },
  io: RunIo,
  modules: readonly string[],
  options: { bundled?: boolean; asServiceAccount?: boolean } = {},
): Promise<number> {
  const stopped = io.stopped.then(() => STOPPED);
  const logger = commandLogger(args, io);
  const kubeconfig = resolve(args.kubeconfig);
  // The token given in a file or as a flag: say so when others can read it.
  if (args.tokenSource === 'flag')
    io.err(
      `converge: WARNING: --token is visible to every local user in the process list (ps); use --token-file PATH or $${TOKEN_ENV} instead`,
    );
  if (args.tokenFile !== undefined && openToOthers(args.tokenFile))
    io.err(`converge: WARNING: the token file ${args.tokenFile} is readable by other users; chmod 600 it`);
  // The token file the fault admin token is written to when generated: beside the kubeconfig.
  const faultAdminTokenPath = join(dirname(kubeconfig), 'fault-admin-token');
  const dataDir = args.dataDir === undefined ? undefined : resolve(args.dataDir);
  // The store first, and its data directory's lock with it: when another converge serve or dev has
  // the directory open, this one stops here (StoreLockedError, exit 1) before it writes anything —
  // the kubeconfig, tokens and certificates the running one handed out stay as they are.
  const store = openStore(dataDir, args.reinitializeStore, logger);
  let server: ApiServer;
  let url: string;
  let webhooks: DevWebhooks | undefined;
  try {
    server = createApiServer({
      host: args.host,
      port: args.port,
      insecure: args.insecure,
      insecureBindNonLoopback: args.insecureBindNonLoopback,
      kubeconfigPath: kubeconfig,
      logger,
      store,
      ...(dataDir === undefined ? {} : { dataDir }),
      ...(args.token === undefined ? {} : { token: args.token }),
      // converge dev's webhook server lives in this process: calls to it skip TLS and HTTP.
      localWebhooks: {
        dispatcher: (url, caPem, serverName) => webhooks?.localDispatcher(url, caPem, serverName),
      },
      ...(args.faultAdmin
        ? {
            faultAdmin:
              args.faultAdminToken === undefined
                ? { tokenPath: faultAdminTokenPath }
                : { token: args.faultAdminToken },
          }
        : {}),
    });
    ({ url } = await server.listen());
  } catch (error) {
    await store.close();
    throw error;
  }
  const stop = new AbortController();
  let manager: Promise<void> | undefined;
  let failed = false;
  let serviceAccount: ServiceAccountBackend | undefined;
  let nats: { readonly backend: Backend; close(): Promise<void> } | undefined;
  let unrecord = (): void => {};
  try {
    io.out(`converge: serving Kubernetes API at ${url} (kubeconfig: ${kubeconfig})`);
    if (args.faultAdmin) {
      io.out(
        `converge: fault injection at ${url}/converge/faults (its own token: ${args.faultAdminToken === undefined ? faultAdminTokenPath : `$${FAULT_ADMIN_TOKEN_ENV} or --fault-admin-token-file`})`,
      );
      // The rules act on HTTP requests; operators in this process use the store directly.
      if (modules.length > 0 && options.asServiceAccount !== true)
        io.out(
          'converge: fault rules apply to HTTP clients (kubectl, other processes); the operators here use the store in process, so they are not faulted: add --as-service-account to run them over HTTP, through the rules',
        );
    }
    if (args.insecure)
      io.err(`converge: WARNING: --insecure: ${insecureExposure(url, args.host, args.faultAdmin)}`);
    if (modules.length > 0) {
      // Loaded only here: a plain `converge serve` starts without the operator machinery (the kinds
      // library, the metrics registry, the webhook host), which is most of what a start would compile.
      const {
        DevWebhooks,
        examplesHints,
        operatedManager,
        operationsLine,
        removeStaleDevWebhooks,
        serviceAccountBackend,
        wireAll,
      } = await import('./serve-modules.ts');
      // Webhooks a previous converge dev on this data dir registered point at a server that is gone.
      await removeStaleDevWebhooks(server.store);
      const devWebhooks = new DevWebhooks({
        backend: server.store,
        logger,
        output: io,
        registrations: () => m.webhooks,
      });
      webhooks = devWebhooks;
      // --as-service-account: the operators talk HTTP to the server with their ServiceAccount's token.
      if (options.asServiceAccount === true)
        serviceAccount = await serviceAccountBackend(server, kubeconfig, modules, logger, io);
      // --nats URL: a NATS JetStream KV backend the modules route their kinds to by name.
      if (args.nats !== undefined) {
        // Loaded only here: a start without --nats does not compile the NATS client.
        const { natsBucketPrefix, openNatsObjects } = await import('./nats-objects.ts');
        nats = await openNatsObjects(args.nats, { name: 'converge dev', logger, env: process.env });
        io.out(
          `converge: NATS JetStream at ${args.nats} is the backend named nats (buckets ${natsBucketPrefix(process.env)}…): manager.useBackend('nats', [type]) keeps a kind there`,
        );
      }
      const { manager: m, server: operations } = operatedManager(
        {
          backend: serviceAccount?.backend ?? server.store,
          ...(nats === undefined ? {} : { backends: { nats: nats.backend } }),
          logger,
          webhookServer: devWebhooks.host,
        },
        {
          metricsBindAddress: args.metricsBindAddress ?? '0',
          healthProbeBindAddress: args.healthProbeBindAddress ?? '0',
        },
        logger,
      );
      const wiring = wireAll(server, m, modules, io, { bundled: options.bundled === true, kubeconfig });
      wiring.catch(() => {}); // a failure after a stop signal is not reported
      if ((await Promise.race([wiring, stopped])) !== STOPPED) {
        manager = m.start(stop.signal).catch((error: unknown) => {
          failed = true;
          io.err(`converge: operators stopped: ${describeWithCauses(error)}`);
        });
        const line = await Promise.race([operationsLine(operations), stopped, manager]);
        if (typeof line === 'string') {
          io.out(line);
          // Where converge why finds it (.converge/operations.json), until it stops.
          unrecord = recordOperations(operations?.url('metrics'), 'dev', io);
        }
        // Printed before the hints; a stop or a failed manager does not wait for it.
        const activated = devWebhooks.activate();
        activated.catch(() => {});
        await Promise.race([activated, stopped, manager]);
        if (options.bundled === true) for (const hint of examplesHints(modules, kubeconfig)) io.out(hint);
      }
    }
    await Promise.race([stopped, manager ?? new Promise<never>(() => {})]);
  } finally {
    // Before the webhook server stops: no configuration may outlive it.
    await webhooks?.remove().catch((error: unknown) => {
      io.err(`converge: webhook configurations not removed: ${describe(error)}`);
    });
    // Also when a module failed: nothing may keep the process alive after the command returns.
    stop.abort();
    await manager;
    unrecord();
    await serviceAccount?.backend.close();
    await nats?.close();
    await server.close();
    // The server does not own a store it was given: closing it releases the data directory.
    await store.close();
  }
  io.out('converge: stopped');
  return failed ? 1 : 0;
}

/**
 * The served store: in `<dataDir>/store` (the layout the API server uses for its own store) when
 * state is kept, else in memory. Opening it takes the data directory's lock.
 */
function openStore(dataDir: string | undefined, reinitialize: boolean, logger: Logger): Store {
  if (dataDir === undefined) return new Store({ logger });
  // A data directory it creates is 0700 at every level, as the API server would make it.
  return new Store({
    logger,
    dataDir: join(dataDir, 'store'),
    ...(reinitialize ? { persistence: { allowReinitialize: true } } : {}),
  });
}

/** Whether a file's mode lets group or others read or write it. */
function openToOthers(path: string): boolean {
  try {
    return (statSync(path).mode & 0o077) !== 0;
  } catch {
    return false;
  }
}
