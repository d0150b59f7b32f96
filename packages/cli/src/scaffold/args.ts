/**
 * The command lines of `converge init [DIR]` and `converge create api`: every flag value is
 * checked here (names as the API server checks them), so a usage error comes before any file is
 * touched.
 */
import { quote, UsageError } from '../errors.ts';
import { type OptionSpecs, parseOptions } from '../options.ts';
import { checkGroup, checkKind, checkName, checkPlural, checkVersion, pluralOf } from './names.ts';

/** The kind a new project starts with when no flag names one. */
export const INIT_DEFAULTS = { group: 'demo.example.com', version: 'v1alpha1', kind: 'Greeting' } as const;

/** `converge init [DIR] …`, parsed. */
export interface InitArgs {
  /** The project folder (default: the working directory). */
  readonly dir: string;
  /** The project name (undefined: from the folder's name). */
  readonly name: string | undefined;
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly clusterScoped: boolean;
  /** Depend on the `npm run pack` tarballs in this folder instead of registry versions. */
  readonly packages: string | undefined;
  /** Write into a folder that is not empty, replacing files of the same names. */
  readonly force: boolean;
}

/** `converge create api …`, parsed. */
export interface CreateApiArgs {
  /** The project folder (default: the working directory). */
  readonly dir: string;
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly clusterScoped: boolean;
}

export const INIT_HELP = `Usage: converge init [DIR] [options]

Makes a new operator project in DIR (default: the working directory), which must be empty: a
package.json depending on the Converge packages, src/operator.ts wiring one controller, the kind
(src/kinds/, a defineKind schema the CRD is generated from), its reconciler (src/controllers/), a
node:test test against the embedded API server (test/) and a README. Then: cd DIR && npm install
&& npm test && npm run dev; npm run manifests writes the Dockerfile and deploy manifests (config/).
Also: npm create converge@latest [DIR] -- [options].

Options:
  --name NAME              The project's name: npm package, Deployment, namespace NAME-system
                           (default: DIR's name in lower case)
  --group GROUP            The kind's API group (default ${INIT_DEFAULTS.group})
  --version VERSION        The kind's API version (default ${INIT_DEFAULTS.version})
  --kind KIND              The kind, PascalCase (default ${INIT_DEFAULTS.kind})
  --plural PLURAL          The kind's plural (default: the kind in lower case + s, es or ies)
  --cluster-scoped         The kind is cluster-scoped (default: namespaced)
  --packages DIR           Depend on the tarballs npm run pack wrote to DIR (unreleased Converge)
                           instead of the registry versions
  --force                  Write into a folder that is not empty, replacing files of the same names
  -h, --help               Show this help`;

export const CREATE_HELP = `Usage: converge create api --group GROUP --version VERSION --kind KIND [options]

Adds a kind to a project converge init made: src/kinds/<kind>.ts (its schema), its reconciler in
src/controllers/, a test in test/, and the controller wired into src/operator.ts at the line
// +converge:scaffold:controllers. Run npm run manifests afterwards for its CRD and RBAC.

Options:
  --group GROUP            The kind's API group (required)
  --version VERSION        The kind's API version (required)
  --kind KIND              The kind, PascalCase (required)
  --plural PLURAL          The kind's plural (default: the kind in lower case + s, es or ies)
  --cluster-scoped         The kind is cluster-scoped (default: namespaced)
  --dir DIR                The project folder (default: the working directory)
  -h, --help               Show this help`;

const KIND_SPECS = {
  group: { type: 'string', value: 'GROUP, like webapp.example.com' },
  version: { type: 'string', value: 'VERSION, like v1alpha1' },
  kind: { type: 'string', value: 'KIND, like Guestbook' },
  plural: { type: 'string', value: 'PLURAL' },
  'cluster-scoped': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionSpecs;

const INIT_SPECS = {
  ...KIND_SPECS,
  name: { type: 'string', value: 'NAME' },
  packages: { type: 'string', value: 'DIR' },
  force: { type: 'boolean' },
} as const satisfies OptionSpecs;

const CREATE_SPECS = { ...KIND_SPECS, dir: { type: 'string', value: 'DIR' } } as const satisfies OptionSpecs;

/** Parses `converge init …` (argv after `init`); throws a {@link UsageError} naming what is wrong. */
export function parseInit(args: readonly string[]): InitArgs | { readonly help: true } {
  const { values, positionals, help } = parseOptions('init', args, INIT_SPECS);
  if (help) return { help: true };
  const [dir = '.', extra] = positionals;
  if (extra !== undefined)
    throw new UsageError('init', `takes one folder, got also ${quote(extra)} (options come as --flag VALUE)`);
  const kind = checkKind('init', values.kind ?? INIT_DEFAULTS.kind);
  return {
    dir,
    name: values.name === undefined ? undefined : checkName('init', values.name),
    group: checkGroup('init', values.group ?? INIT_DEFAULTS.group),
    version: checkVersion('init', values.version ?? INIT_DEFAULTS.version),
    kind,
    plural: checkPlural('init', values.plural ?? pluralOf(kind)),
    clusterScoped: values['cluster-scoped'] ?? false,
    packages: values.packages,
    force: values.force ?? false,
  };
}

/**
 * Parses `converge create …` (argv after `create`: `api` and its flags); throws a
 * {@link UsageError} naming what is wrong.
 */
export function parseCreate(args: readonly string[]): CreateApiArgs | { readonly help: true } {
  const { values, positionals, help } = parseOptions('create', args, CREATE_SPECS);
  if (help) return { help: true };
  const [what, extra] = positionals;
  if (what === undefined) throw new UsageError('create', 'what to create is missing: converge create api …');
  if (what !== 'api') throw new UsageError('create', `can create api, not ${quote(what)}`);
  if (extra !== undefined)
    throw new UsageError('create', `unexpected argument ${quote(extra)} (options come as --flag VALUE)`);
  for (const flag of ['group', 'version', 'kind'] as const) {
    if (values[flag] === undefined) throw new UsageError('create', `--${flag} is required`);
  }
  const kind = checkKind('create', values.kind as string);
  return {
    dir: values.dir ?? '.',
    group: checkGroup('create', values.group as string),
    version: checkVersion('create', values.version as string),
    kind,
    plural: checkPlural('create', values.plural ?? pluralOf(kind)),
    clusterScoped: values['cluster-scoped'] ?? false,
  };
}
