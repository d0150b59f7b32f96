import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Manager } from '@converge/runtime';

/** An operator module: its default export wires controllers into the manager. */
export type OperatorModule = (manager: Manager) => void | Promise<void>;

/** Imports `file` and returns its default export, which must be an {@link OperatorModule}. */
export async function loadModule(file: string): Promise<OperatorModule> {
  const imported = (await import(pathToFileURL(resolve(file)).href)) as { default?: unknown };
  if (typeof imported.default !== 'function') {
    throw new Error(`${file}: an operator module must export default (manager) => void | Promise<void>`);
  }
  return imported.default as OperatorModule;
}
