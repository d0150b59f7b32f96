/**
 * `converge create api`: a further kind in a project `converge init` made — its schema,
 * controller and test — wired into the operator module at the scaffold markers.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { CreateApiArgs } from './args.ts';
import { ScaffoldError, ScaffoldErrorCodes } from './errors.ts';
import { kindFiles, writeFiles } from './init.ts';
import { type KindNames, kindNames } from './names.ts';
import { CONTROLLERS_MARKER, IMPORTS_MARKER } from './project-templates.ts';

/** What {@link createApi} made. */
export interface CreateApiResult {
  /** The project folder, absolute. */
  readonly dir: string;
  readonly kind: KindNames;
  /** The files written or changed, relative to `dir`, sorted. */
  readonly files: readonly string[];
}

/** The operator module of a project: package.json's `converge.module`, else `src/operator.ts`. */
function operatorPath(dir: string): string {
  const manifest = join(dir, 'package.json');
  if (!existsSync(manifest))
    throw new ScaffoldError(
      ScaffoldErrorCodes.NOT_A_PROJECT,
      dir,
      'holds no package.json; run converge create api in a project converge init made (or pass --dir)',
    );
  let module: unknown;
  try {
    module = (JSON.parse(readFileSync(manifest, 'utf8')) as { converge?: { module?: unknown } }).converge
      ?.module;
  } catch (error) {
    throw new ScaffoldError(ScaffoldErrorCodes.NOT_A_PROJECT, manifest, 'is not JSON', { cause: error });
  }
  return typeof module === 'string' ? module : 'src/operator.ts';
}

/**
 * The operator module with the kind's controller imported and wired above the markers. Throws
 * a {@link ScaffoldError} when the controllers marker is gone or the controller is wired already.
 */
export function wireController(source: string, kind: KindNames, file: string, relativeDir: string): string {
  const lines = source.split('\n');
  const marker = lines.findIndex((l) => l.trim() === CONTROLLERS_MARKER);
  if (marker < 0)
    throw new ScaffoldError(
      ScaffoldErrorCodes.MARKER_MISSING,
      file,
      `has no line ${CONTROLLERS_MARKER} to wire the ${kind.kind} controller above; put it back inside the default export, or wire ${kind.camel}Controller(manager) by hand`,
    );
  const call = `${kind.camel}Controller(manager);`;
  if (lines.some((l) => l.trim() === call))
    throw new ScaffoldError(ScaffoldErrorCodes.KIND_EXISTS, file, `wires ${kind.kind} already (${call})`);
  const indent = /^\s*/.exec(lines[marker] as string)?.[0] ?? '';
  lines.splice(marker, 0, `${indent}${call}`);
  const statement = `import { ${kind.camel}Controller } from '${relativeDir}controllers/${kind.file}.ts';`;
  const importsMarker = lines.findIndex((l) => l.trim() === IMPORTS_MARKER);
  // Without its marker, the import goes after the last line that ends an import statement.
  const at =
    importsMarker >= 0
      ? importsMarker
      : lines.findLastIndex((l) => /^import\s.*\sfrom\s+['"][^'"]+['"];?\s*$/.test(l)) + 1;
  lines.splice(at, 0, statement);
  return lines.join('\n');
}

/**
 * Adds a kind to the project in `args.dir`. Throws a {@link ScaffoldError}, before writing
 * anything, when the folder is no project, the kind's files exist, or the operator module lost
 * its marker or wires the kind already.
 */
export function createApi(args: CreateApiArgs): CreateApiResult {
  const dir = resolve(args.dir);
  const module = operatorPath(dir);
  const modulePath = join(dir, module);
  if (!existsSync(modulePath))
    throw new ScaffoldError(
      ScaffoldErrorCodes.NOT_A_PROJECT,
      modulePath,
      'does not exist: no operator module to wire into',
    );
  if (!module.startsWith('src/'))
    throw new ScaffoldError(
      ScaffoldErrorCodes.NOT_A_PROJECT,
      modulePath,
      'is not in src/, where create api puts kinds and controllers',
    );
  const kind = kindNames(args);
  const files = kindFiles(kind);
  const existing = Object.keys(files).filter((f) => existsSync(join(dir, f)));
  if (existing.length > 0)
    throw new ScaffoldError(
      ScaffoldErrorCodes.KIND_EXISTS,
      join(dir, existing[0] as string),
      `exists: the project has a ${kind.kind} kind already`,
    );
  const depth = module.split('/').length - 2;
  const relativeDir = depth === 0 ? './' : '../'.repeat(depth);
  const wired = wireController(readFileSync(modulePath, 'utf8'), kind, modulePath, relativeDir);
  writeFiles(dir, { ...files, [module]: wired });
  return { dir, kind, files: [...Object.keys(files), module].sort() };
}
