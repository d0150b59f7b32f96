import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Manager } from '@converge/runtime';
import { describeError, OperatorModuleError } from './errors.ts';

/** An operator module: its default export wires controllers into the manager. */
export type OperatorModule = (manager: Manager) => void | Promise<void>;

/** Makes the error that names the module for `reason` (an {@link OperatorModuleError}, a `ScenarioModuleError`). */
export type ModuleFailure = (reason: string, options?: { cause?: unknown }) => Error;

/**
 * Imports `file` and returns its module namespace. Throws the error `fail` makes, naming the
 * file, if it does not exist, it is TypeScript and this Node does not strip types, or its import
 * fails (a syntax error, a missing package, a throw at its top level). `converge dev`, `run`,
 * `manifests` and `simulate` load their modules through it.
 */
export async function importModule(file: string, fail: ModuleFailure): Promise<{ default?: unknown }> {
  const path = resolve(file);
  try {
    await stat(path);
  } catch (error) {
    throw fail(path === file ? 'does not exist' : `does not exist (${path})`, { cause: error });
  }
  if (/\.[cm]?ts$/.test(path) && !process.features.typescript) {
    throw fail(
      `is TypeScript, and this Node (${process.version}) does not strip types: use Node 22.18 or newer ` +
        'without --no-experimental-strip-types, or compile the module to JavaScript',
    );
  }
  try {
    return (await import(pathToFileURL(path).href)) as { default?: unknown };
  } catch (error) {
    throw fail(`failed to load: ${describeError(error)}`, { cause: error });
  }
}

/**
 * Imports `file` and returns its default export, which must be an {@link OperatorModule}. Throws
 * an {@link OperatorModuleError} naming the file if it does not exist, it is TypeScript and this
 * Node does not strip types, its import fails (a syntax error, a missing package, a throw at its
 * top level) or it exports no default function.
 */
export async function loadModule(file: string): Promise<OperatorModule> {
  const imported = await importModule(
    file,
    (reason, options) => new OperatorModuleError(file, reason, options),
  );
  if (typeof imported.default !== 'function') {
    throw new OperatorModuleError(
      file,
      'has no default export (manager) => void | Promise<void> to wire controllers with',
    );
  }
  return imported.default as OperatorModule;
}

/** Loads `file` and runs its default export on `manager`; an error names the module. */
export async function wireModule(file: string, manager: Manager): Promise<void> {
  const operator = await loadModule(file);
  try {
    await operator(manager);
  } catch (error) {
    throw new OperatorModuleError(file, `failed while wiring its controllers: ${describeError(error)}`, {
      cause: error,
    });
  }
}
