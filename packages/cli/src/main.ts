import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ApiServer, createApiServer } from '@converge/apiserver';
import { isAlreadyExists, Manager, ownedByKindSelector, type ResourceType } from '@converge/runtime';
import { parseAllDocuments } from 'yaml';
import { type Command, HELP, parseCommand, type ServeArgs, USAGE } from './args.ts';
import { consoleLogger } from './console-logger.ts';
import { describeError as describe } from './errors.ts';
import { runKv } from './kv.ts';
import { loadModule } from './operator-module.ts';
import { runOperators } from './run.ts';

export type { OperatorModule } from './operator-module.ts';

/** Where the bundled example operators live (used by `converge dev` without modules). */
export const EXAMPLES_DIR = fileURLToPath(new URL('../../../examples/', import.meta.url));

const crdType: ResourceType = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  kind: 'CustomResourceDefinition',
  plural: 'customresourcedefinitions',
  namespaced: false,
};

export interface RunIo {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  /** Resolves when the process should stop (SIGINT/SIGTERM). */
  readonly stopped: Promise<void>;
}

function processIo(): RunIo {
  return {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    stopped: new Promise((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    }),
  };
}

/** Runs the command line; returns the exit code. */
export async function main(argv: readonly string[], io: RunIo = processIo()): Promise<number> {
  let command: Command;
  try {
    command = parseCommand(argv);
  } catch (error) {
    io.err(`converge: ${(error as Error).message}`);
    io.err(USAGE);
    return 2;
  }
  try {
    switch (command.command) {
      case 'help':
        io.out(
          command.topic !== undefined && command.topic in HELP ? (HELP[command.topic] as string) : USAGE,
        );
        return 0;
      case 'version':
        io.out('converge 0.1.0');
        return 0;
      case 'serve':
        return await serve(command, io, []);
      case 'dev':
        return command.modules.length > 0
          ? await serve(command, io, command.modules)
          : await serve(command, io, await bundledExamples(), { bundled: true });
      case 'run':
        return await runOperators(command, io);
      case 'kv':
        return await runKv(command, io);
    }
  } catch (error) {
    io.err(`converge: ${describe(error)}`);
    return 1;
  }
}

/**
 * Serves the API; with modules, runs them in one manager over the server's store. A module that
 * fails to load or wire stops the command, except a bundled example (`converge dev` with no
 * module), which is reported and left out: the NATS example needs a NATS server, the others do not.
 */
async function serve(
  args: ServeArgs,
  io: RunIo,
  modules: readonly string[],
  options: { bundled?: boolean } = {},
): Promise<number> {
  const logger = consoleLogger(io.err);
  const server: ApiServer = createApiServer({
    host: args.host,
    port: args.port,
    insecure: args.insecure,
    kubeconfigPath: resolve(args.kubeconfig),
    logger,
    ...(args.dataDir === undefined ? {} : { dataDir: resolve(args.dataDir) }),
    ...(args.token === undefined ? {} : { token: args.token }),
  });
  const { url } = await server.listen();
  io.out(`converge: serving Kubernetes API at ${url} (kubeconfig: ${resolve(args.kubeconfig)})`);
  if (args.insecure)
    io.err('converge: WARNING: --insecure: plain HTTP and no token; anyone on this host can use the API');
  const stop = new AbortController();
  let manager: Promise<void> | undefined;
  let failed = false;
  if (modules.length > 0) {
    const m = new Manager({ backend: server.store, logger });
    for (const file of modules) {
      try {
        await applyManifests(server, file);
        const operator = await loadModule(file);
        await operator(m);
      } catch (error) {
        if (options.bundled !== true) throw error;
        io.err(`converge: example ${exampleName(file)} not started: ${describe(error)}`);
        continue;
      }
      io.out(`converge: running operator ${file}`);
      if (options.bundled === true && exampleName(file) === 'kumori') {
        for (const hint of kumoriHints(file, resolve(args.kubeconfig))) io.out(hint);
      }
    }
    manager = m.start(stop.signal).catch((error: unknown) => {
      failed = true;
      io.err(`converge: operators stopped: ${describe(error)}`);
    });
    io.out(
      `converge: try  kubectl --kubeconfig ${resolve(args.kubeconfig)} get configmapgenerators,configmaps -A`,
    );
  }
  await Promise.race([io.stopped, manager ?? new Promise<never>(() => {})]);
  stop.abort();
  await manager;
  await server.close();
  io.out('converge: stopped');
  return failed ? 1 : 0;
}

async function bundledExamples(): Promise<string[]> {
  const entries = await readdir(EXAMPLES_DIR, { withFileTypes: true });
  return entries
    .filter((e) => e.isDirectory())
    .map((e) => resolve(EXAMPLES_DIR, e.name, 'operator.ts'))
    .sort();
}

/** What to try with the Kumori example: put an Application into NATS, watch its secondaries appear. */
function kumoriHints(moduleFile: string, kubeconfig: string): string[] {
  const sample = resolve(moduleFile, '..', 'manifests', 'application.yaml');
  const shown = relative(process.cwd(), sample);
  const path = shown.startsWith('..') || isAbsolute(shown) ? sample : shown;
  const owned = ownedByKindSelector({ group: 'kumori.examples.converge.dev', kind: 'Application' });
  return [
    `converge: try  converge kv apply -f ${path}`,
    `converge: then kubectl --kubeconfig ${kubeconfig} get configmaps,deployments -A -l ${owned}`,
  ];
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
      const object = doc.toJS() as {
        kind?: string;
        metadata?: { name?: string };
        spec?: { group?: string; names?: { plural?: string } };
      };
      if (object?.kind !== 'CustomResourceDefinition') continue;
      try {
        await server.store.create(crdType, object as never);
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
      }
      const apiVersion = `${object.spec?.group}/`;
      for (let i = 0; i < 100; i++) {
        const served = server.store
          .types()
          .some((t) => `${t.group}/` === apiVersion && t.plural === object.spec?.names?.plural);
        if (served) break;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  }
}
