/**
 * The operator half of `converge dev`: modules wired into one manager next to the served API, the
 * CRDs they ship or define applied first, and what to try with the bundled examples. `serve.ts`
 * loads this only when there are modules to run.
 */
import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, relative, resolve } from 'node:path';
import type { ApiServer } from '@converge/apiserver';
import { type CustomResourceDefinition, type Manager, ownedByKindSelector } from '@converge/runtime';
import { parseAllDocuments } from 'yaml';
import { applyKindCrds, ensureCrd } from './dev-kinds.ts';
import { describeError as describe, OperatorModuleError } from './errors.ts';
import { wireModule } from './operator-module.ts';
import type { RunIo } from './process-io.ts';

export { serviceAccountBackend } from './dev-service-account.ts';
export { DevWebhooks, removeStaleDevWebhooks } from './dev-webhooks.ts';
export { operatedManager, operationsLine } from './operations.ts';

export async function wireAll(
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
      const crds = await applyKindCrds(server, manager).catch((error: unknown) => {
        throw new OperatorModuleError(
          file,
          `the CRDs of its kinds could not be applied: ${describe(error)}`,
          {
            cause: error,
          },
        );
      });
      for (const { name, outcome } of crds) {
        if (outcome !== 'unchanged')
          io.out(
            `converge: ${outcome} CustomResourceDefinition ${name} (from the defineKind kinds ${file} wires)`,
          );
      }
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
export function examplesHints(modules: readonly string[], kubeconfig: string): string[] {
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
