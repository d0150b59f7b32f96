/**
 * `converge import FILE… [--out DIR] [--check]`: TypeScript `defineKind` modules from CRDs someone
 * else owns (as `cdk8s import`), and, with `--check`, the drift check of such modules in CI.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CrdImportError, importCrd } from '@converge/kube';
import { type ImportArgs, moduleName } from './import-args.ts';
import type { RunIo } from './process-io.ts';

/** Runs `converge import`: 0 when written (or up to date with --check), 1 on drift or a bad CRD. */
export function runImport(args: ImportArgs, io: RunIo): number {
  const modules: { readonly path: string; readonly source: string }[] = [];
  for (const file of args.files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      io.err(`converge import: cannot read ${file}: ${(error as Error).message}`);
      return 1;
    }
    try {
      modules.push({ path: join(args.out, moduleName(file)), source: importCrd(text, { from: args.from }) });
    } catch (error) {
      if (!(error instanceof CrdImportError)) throw error;
      io.err(`converge import: ${file}: ${error.message}`);
      return 1;
    }
  }
  if (args.check) {
    const drifted = modules.filter(
      ({ path, source }) => !existsSync(path) || readFileSync(path, 'utf8') !== source,
    );
    for (const { path } of drifted)
      io.err(`${path}: ${existsSync(path) ? 'differs from' : 'missing, expected'} what its CRD file gives`);
    if (drifted.length > 0) {
      io.err(`converge import: ${drifted.length} module(s) out of date; run converge import without --check`);
      return 1;
    }
    io.out(`${modules.length} module(s) up to date`);
    return 0;
  }
  mkdirSync(args.out, { recursive: true });
  for (const { path, source } of modules) {
    writeFileSync(path, source);
    io.out(`wrote ${path}`);
  }
  return 0;
}
