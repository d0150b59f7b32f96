/**
 * `converge dev`: the CRDs of the `defineKind` kinds an operator module wired are created (or
 * brought up to date, when the data dir holds an older version) in the embedded API server before
 * the operators start — so a project `converge init` made runs at once, with no YAML to apply.
 * And `converge dev` without a module runs the project's (package.json `converge.module`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiServer } from '@converge/apiserver';
import { crdsOf, type Kind, kindOf } from '@converge/kube';
import {
  type CustomResourceDefinition,
  customResourceDefinitionType,
  isAlreadyExists,
  type Manager,
} from '@converge/runtime';

/** How long a created CRD may take to be served (the server's CRD controller registers it). */
const SERVED_WITHIN_MS = 10_000;

/**
 * Creates `crd` in the embedded server, or brings a stored one's spec up to date when `update`
 * (the data dir may hold an older version of a kind); resolves once the server serves its kind.
 */
export async function ensureCrd(
  server: ApiServer,
  crd: CustomResourceDefinition,
  options: { readonly update: boolean },
): Promise<'created' | 'updated' | 'unchanged'> {
  let outcome: 'created' | 'updated' | 'unchanged' = 'created';
  try {
    await server.store.create(customResourceDefinitionType, crd);
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
    outcome = 'unchanged';
    if (options.update) {
      const key = { namespace: '', name: crd.metadata.name ?? '' };
      const stored = await server.store.get<CustomResourceDefinition>(customResourceDefinitionType, key);
      if (JSON.stringify(stored.spec) !== JSON.stringify(crd.spec)) {
        await server.store.update(customResourceDefinitionType, { ...stored, spec: crd.spec });
        outcome = 'updated';
      }
    }
  }
  const { group, names } = crd.spec;
  const deadline = Date.now() + SERVED_WITHIN_MS;
  while (!server.store.types().some((t) => t.group === group && t.plural === names.plural)) {
    if (Date.now() > deadline)
      throw new Error(`the CRD ${crd.metadata.name} was not served within ${SERVED_WITHIN_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return outcome;
}

/**
 * Creates or updates the CRDs of the kinds `manager`'s wiring touched; resolves once they are
 * served, with what happened to each (by CRD name).
 */
export async function applyKindCrds(
  server: ApiServer,
  manager: Manager,
): Promise<readonly { readonly name: string; readonly outcome: 'created' | 'updated' | 'unchanged' }[]> {
  const kinds = manager.permissions
    .types()
    .map((type) => kindOf(type))
    .filter((kind): kind is Kind => kind !== undefined);
  if (kinds.length === 0) return [];
  const applied = [];
  for (const crd of crdsOf(kinds)) {
    applied.push({ name: crd.metadata.name ?? '', outcome: await ensureCrd(server, crd, { update: true }) });
  }
  return applied;
}

/**
 * The operator modules package.json in `cwd` names (`"converge": { "module": "src/operator.ts" }`,
 * or a list), for `converge dev` without modules; undefined when it names none (the bundled
 * examples run then) or there is no readable package.json.
 */
export function projectModules(cwd: string = process.cwd()): readonly string[] | undefined {
  const path = join(cwd, 'package.json');
  if (!existsSync(path)) return undefined;
  let module: unknown;
  try {
    module = (JSON.parse(readFileSync(path, 'utf8')) as { converge?: { module?: unknown } }).converge?.module;
  } catch {
    return undefined;
  }
  if (typeof module === 'string') return [module];
  if (Array.isArray(module) && module.length > 0 && module.every((m) => typeof m === 'string')) return module;
  return undefined;
}
