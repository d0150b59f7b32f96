/**
 * `converge serve` and `converge dev`: the embedded API server, and with `dev` operator modules
 * in one manager over its store.
 */
import { statSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { type ApiServer, createApiServer, insecureExposure } from '@converge/apiserver';
import {
  type CustomResourceDefinition,
  type Logger,
  type Manager,
  ownedByKindSelector,
} from '@converge/runtime';
import { Store } from '@converge/store';
import { parseAllDocuments } from 'yaml';
import { FAULT_ADMIN_TOKEN_ENV, type ServeArgs, TOKEN_ENV } from './args.ts';
import { commandLogger } from './cli-logger.ts';
import { applyKindCrds, ensureCrd } from './dev-kinds.ts';
import { type ServiceAccountBackend, serviceAccountBackend } from './dev-service-account.ts';
import { DevWebhooks, removeStaleDevWebhooks } from './dev-webhooks.ts';
import { describeError as describe, describeWithCauses, OperatorModuleError } from './errors.ts';
import { operatedManager, operationsLine } from './operations.ts';
import type { OperationsArgs } from './operations-args.ts';
import { wireModule } from './operator-module.ts';
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
  args: ServeArgs & Partial<OperationsArgs>,
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
  let webhooks: DevWebhooks | undefined;
  let serviceAccount: ServiceAccountBackend | undefined;
  try {
    io.out(`converge: serving Kubernetes API at ${url} (kubeconfig: ${kubeconfig})`);
    if (args.faultAdmin)
      io.out(
        `converge: fault injection at ${url}/converge/faults (its own token: ${args.faultAdminToken === undefined ? faultAdminTokenPath : `$${FAULT_ADMIN_TOKEN_ENV} or --fault-admin-token-file`})`,
      );
    if (args.insecure)
      io.err(`converge: WARNING: --insecure: ${insecureExposure(url, args.host, args.faultAdmin)}`);
    if (modules.length > 0) {
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
      const { manager: m, server: operations } = operatedManager(
        { backend: serviceAccount?.backend ?? server.store, logger, webhookServer: devWebhooks.host },
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
        if (typeof line === 'string') io.out(line);
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
    await serviceAccount?.backend.close();
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

async function wireAll(
  server: ApiServer,
  manager: Manager,
  modules: readonly string[],
  io: RunIo,
  options: { bundled: boolean; kubeconfig: string },
): Promise<void> {
  for (const file of modules) {
    try {
      try {
        await applyManifests(server, file);
      } catch (error) {
        throw new OperatorModuleError(file, `manifests could not be applied: ${describe(error)}`, {
          cause: error,
        });
      }
      await wireModule(file, manager);
      // The CRDs of the defineKind kinds it wired (a project converge init made has no YAML).
      await applyKindCrds(server, manager).catch((error: unknown) => {
        throw new OperatorModuleError(
          file,
          `the CRDs of its kinds could not be applied: ${describe(error)}`,
          {
            cause: error,
          },
        );
      });
    } catch (error) {
      if (!options.bundled) throw error;
      const cause = error instanceof OperatorModuleError && error.cause !== undefined ? error.cause : error;
      io.err(`converge: example ${exampleName(file)} not started: ${describe(cause)}`);
      continue;
    }
    io.out(`converge: running operator ${file}`);
    if (options.bundled && exampleName(file) === 'kumori') {
      for (const hint of kumoriHints(file, options.kubeconfig)) io.out(hint);
    }
    if (options.bundled && exampleName(file) === 'poller') for (const hint of pollerHints()) io.out(hint);
  }
}

/**
 * What to try with the bundled examples: apply the ConfigMapGenerator sample (from the repository's
 * `examples/` or, installed, from the CLI package's `dist/examples/`), see its ConfigMaps appear.
 */
function examplesHints(modules: readonly string[], kubeconfig: string): string[] {
  const generator = modules.find((file) => exampleName(file) === 'configmap-generator');
  const get = `kubectl --kubeconfig ${kubeconfig} get configmapgenerators,configmaps -A`;
  if (generator === undefined) return [`converge: try  ${get}`];
  const sample = shownPath(resolve(generator, '..', 'manifests', 'sample.yaml'));
  return [`converge: try  kubectl --kubeconfig ${kubeconfig} apply -f ${sample}`, `converge: then ${get}`];
}

/** A path relative to the working directory when it lies below it, else absolute. */
function shownPath(path: string): string {
  const shown = relative(process.cwd(), path);
  return shown.startsWith('..') || isAbsolute(shown) ? path : shown;
}

/** What to try with the Kumori example: put an Application into NATS, watch its secondaries appear. */
function kumoriHints(moduleFile: string, kubeconfig: string): string[] {
  const path = shownPath(resolve(moduleFile, '..', 'manifests', 'application.yaml'));
  const owned = ownedByKindSelector({ group: 'kumori.examples.converge.dev', kind: 'Application' });
  return [
    `converge: try  converge kv apply -f ${path}`,
    `converge: then kubectl --kubeconfig ${kubeconfig} get configmaps,deployments -A -l ${owned}`,
  ];
}

/**
 * What to try with the poller example: desire a role in its table, read its status. psql reads the
 * same PG* variables the example does; only the host default differs (psql: the local socket).
 */
function pollerHints(env: NodeJS.ProcessEnv = process.env): string[] {
  const schema = env.CONVERGE_POLLER_SCHEMA || 'converge_poller';
  const psql = env.DATABASE_URL ? 'psql "$DATABASE_URL"' : env.PGHOST ? 'psql' : 'psql -h 127.0.0.1';
  const insert = `insert into ${schema}.desired_roles (name, can_login, connection_limit) values ('app', true, 5)`;
  return [`converge: try  ${psql} -c "${insert}"`, `converge: then ${psql} -c "table ${schema}.status"`];
}

/** `website` for `…/examples/website/operator.ts`. */
function exampleName(file: string): string {
  return basename(dirname(file));
}

/** Creates the CRDs in `manifests/*.yaml` next to a module (bundled examples ship theirs), and waits until they are served. */
async function applyManifests(server: ApiServer, moduleFile: string): Promise<void> {
  const dir = resolve(moduleFile, '..', 'manifests');
  let files: string[];
  try {
    files = (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort();
  } catch {
    return;
  }
  for (const f of files) {
    for (const doc of parseAllDocuments(await readFile(resolve(dir, f), 'utf8'))) {
      const object = doc.toJS() as { kind?: unknown } | null;
      if (object?.kind !== 'CustomResourceDefinition') continue;
      // A module's own YAML is created once; a stored CRD (an older data dir) is left as it is.
      await ensureCrd(server, object as CustomResourceDefinition, { update: false });
    }
  }
}
