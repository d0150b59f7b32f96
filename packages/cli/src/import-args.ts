/**
 * `converge import …` parsed and checked (`converge import --help`), apart from the command so that
 * parsing the command line loads no Kubernetes code.
 */
import { basename, join } from 'node:path';
import { quote, UsageError } from './errors.ts';
import { type OptionSpecs, parseOptions } from './options.ts';

/** `converge import …`, parsed. */
export interface ImportArgs {
  /** CRD YAML files; each becomes one module named after the file (`certificates.yaml` → `certificates.ts`). */
  readonly files: readonly string[];
  /** Where the modules go (default src/imports). */
  readonly out: string;
  /** Write nothing; exit 1 listing each module that differs from what the CRDs give. */
  readonly check: boolean;
  /** The module the generated code imports from (default @converge/kube). */
  readonly from: string;
}

export const IMPORT_HELP = `Usage: converge import FILE… [options]

Writes a TypeScript module for each CRD YAML file (one or more CustomResourceDefinitions, or a List
of them; other documents are skipped): each version becomes a defineKind export with a TypeBox
schema, so the objects of a CRD you do not own are typed (crdsOf of the exports gives the CRD's
schema back). FILE.yaml becomes DIR/FILE.ts.

Options:
  --out DIR                Where the modules go (default src/imports)
  --check                  Write nothing; exit 1 listing each module that differs from what the
                           CRD files give (a CRD that changed since it was imported). For CI.
  --from MODULE            Import defineKind and Type from MODULE (default @converge/kube)
  -h, --help               Show this help`;

const SPECS = {
  out: { type: 'string', value: 'DIR' },
  check: { type: 'boolean' },
  from: { type: 'string', value: 'MODULE' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionSpecs;

/** The module a CRD file becomes: its name without `.yaml`/`.yml`/`.json`, plus `.ts`. */
export function moduleName(file: string): string {
  return `${basename(file).replace(/\.(ya?ml|json)$/i, '')}.ts`;
}

/** Parses `converge import …` (argv after `import`); throws a UsageError naming what is wrong. */
export function parseImport(args: readonly string[]): ImportArgs | { readonly help: true } {
  const { values, positionals, help } = parseOptions('import', args, SPECS);
  if (help) return { help: true };
  if (positionals.length === 0) throw new UsageError('import', 'give at least one CRD YAML file');
  const seen = new Map<string, string>();
  for (const file of positionals) {
    if (!/\.(ya?ml|json)$/i.test(file))
      throw new UsageError('import', `a CRD file is .yaml, .yml or .json, got ${quote(file)}`);
    const name = moduleName(file);
    const other = seen.get(name);
    if (other !== undefined)
      throw new UsageError('import', `${quote(other)} and ${quote(file)} would both become ${quote(name)}`);
    seen.set(name, file);
  }
  const from = values.from ?? '@converge/kube';
  if (!/^[@a-z0-9./_-][^\s'"\\]*$/i.test(from))
    throw new UsageError(
      'import',
      `--from must be a module specifier such as @converge/kube, got ${quote(from)}`,
    );
  return {
    files: positionals,
    out: values.out ?? join('src', 'imports'),
    check: values.check ?? false,
    from,
  };
}
